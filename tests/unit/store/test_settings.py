"""The run store options are checked before anything is read or written: each mistake names its field, its value
and the fix."""

from __future__ import annotations

import pytest
from ansible_collections.descheduler.fleet.plugins.module_utils.store.settings import (
    StoreError,
    check_run_id,
    store_settings,
)


def test_a_directory_store_needs_an_absolute_path() -> None:
    assert store_settings({"path": "/srv/runs/"}, {}).path == "/srv/runs"
    with pytest.raises(StoreError) as caught:
        store_settings({"path": "runs"}, {})
    assert caught.value.field == "run_store.path" and caught.value.value == "runs"
    assert "absolute path" in str(caught.value)


def test_exactly_one_of_path_and_bucket() -> None:
    for options in ({}, {"path": "/srv/runs", "bucket": "runs"}):
        with pytest.raises(StoreError, match="exactly one of path .* or bucket") as caught:
            store_settings(options, {})
        assert caught.value.field == "run_store"


def test_s3_options_on_a_directory_are_refused() -> None:
    with pytest.raises(StoreError, match="endpoint_url are options of an S3 store") as caught:
        store_settings({"path": "/srv/runs", "endpoint_url": "http://127.0.0.1:9000"}, {})
    assert caught.value.field == "run_store.endpoint_url"


@pytest.mark.parametrize("bucket", ["Runs", "ab", "runs/prod", "-runs", "a..b"])
def test_a_bucket_name_is_checked(bucket: str) -> None:
    with pytest.raises(StoreError, match="is not an S3 bucket name") as caught:
        store_settings({"bucket": bucket}, {})
    assert caught.value.field == "run_store.bucket" and caught.value.value == bucket


def test_the_endpoint_must_be_an_http_url() -> None:
    with pytest.raises(StoreError, match="is not an http\\(s\\) URL") as caught:
        store_settings({"bucket": "runs", "endpoint_url": "127.0.0.1:9000"}, {})
    assert caught.value.field == "run_store.endpoint_url"


def test_credentials_come_from_the_options_then_the_aws_variables() -> None:
    environ = {"AWS_ACCESS_KEY_ID": "env-id", "AWS_SECRET_ACCESS_KEY": "env-secret", "AWS_REGION": "eu-west-3",
               "AWS_ENDPOINT_URL": "https://s3.example.com"}
    settings = store_settings({"bucket": "runs", "prefix": "/prod/"}, environ)
    assert (settings.access_key, settings.secret_key, settings.region) == ("env-id", "env-secret", "eu-west-3")
    assert settings.endpoint_url == "https://s3.example.com" and settings.prefix == "prod"
    given = store_settings({"bucket": "runs", "access_key": "id", "secret_key": "secret"}, environ)
    assert (given.access_key, given.secret_key) == ("id", "secret")


def test_an_access_key_needs_its_secret() -> None:
    with pytest.raises(StoreError, match="needs its secret key") as caught:
        store_settings({"bucket": "runs", "access_key": "id"}, {})
    assert caught.value.field == "run_store.secret_key"


def test_a_prefix_with_dot_segments_is_refused() -> None:
    with pytest.raises(StoreError, match="'..' segment"):
        store_settings({"bucket": "runs", "prefix": "a/../b"}, {})


@pytest.mark.parametrize("run_id", [None, "", "../x", "a b", ".hidden", "x" * 129])
def test_a_run_id_is_checked(run_id: object) -> None:
    with pytest.raises(StoreError, match="is not a run id") as caught:
        check_run_id(run_id)
    assert caught.value.field == "run_id"


def test_good_run_ids() -> None:
    for run_id in ("4711", "2026-11-26T1200", "prod.weekly_3"):
        assert check_run_id(run_id) == run_id
