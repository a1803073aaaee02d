"""The two places a run store keeps its objects, behind one small interface: ``put`` a text object, ``get`` it
(None when absent), list the ``keys`` under a prefix, and ``locate`` a key for a reader (a path or an s3:// URL).

Keys are '/'-separated relative names made by runs.py (never '..', never absolute). A directory writes each object
atomically through files.py; S3 uses path-style addressing, which every S3-compatible server answers.
"""

from __future__ import annotations

import os
from typing import Optional, Protocol

from ansible_collections.descheduler.fleet.plugins.module_utils.files import write_atomically
from ansible_collections.descheduler.fleet.plugins.module_utils.store.settings import StoreError, StoreSettings

try:
    import boto3
    from botocore.config import Config
    from botocore.exceptions import BotoCoreError, ClientError
    BOTO3_IMPORT_ERROR: Optional[ImportError] = None
except ImportError as error:  # only an S3 store needs it
    BOTO3_IMPORT_ERROR = error


class ObjectStore(Protocol):
    def check(self) -> None: ...

    def put(self, key: str, text: str) -> None: ...

    def get(self, key: str) -> Optional[str]: ...

    def keys(self, prefix: str) -> list[str]: ...

    def locate(self, key: str) -> str: ...


class DirectoryStore:
    """Objects as files under a directory (shared storage every job slice mounts)."""

    def __init__(self, root: str) -> None:
        self.root = root

    def locate(self, key: str) -> str:
        return os.path.join(self.root, *key.split("/"))

    def check(self) -> None:
        """The directory exists (or is created) and this job may write there."""
        try:
            os.makedirs(self.root, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"run_store.path: cannot create {self.root}: {exc.strerror or exc}; give a directory on "
                             "storage every job slice mounts", field="run_store.path", value=self.root) from exc
        if not os.access(self.root, os.W_OK | os.X_OK):
            raise StoreError(f"run_store.path: {self.root} is not writable by this job; give a directory it may "
                             "write", field="run_store.path", value=self.root)

    def put(self, key: str, text: str) -> None:
        try:
            write_atomically(self.locate(key), text)
        except OSError as exc:
            raise StoreError(f"run_store.path: cannot write {self.locate(key)}: {exc.strerror or exc}; give a "
                             "directory this job may write (shared by every job slice)", field="run_store.path",
                             value=self.root) from exc

    def get(self, key: str) -> Optional[str]:
        try:
            with open(self.locate(key), encoding="utf-8") as handle:
                return handle.read()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StoreError(f"run_store.path: cannot read {self.locate(key)}: {exc.strerror or exc}",
                             field="run_store.path", value=self.root) from exc

    def keys(self, prefix: str) -> list[str]:
        top = self.locate(prefix.rstrip("/"))
        found = []
        for directory, _subdirs, files in os.walk(top):
            for name in files:
                if name.startswith("."):  # a temporary file of a write in progress
                    continue
                relative = os.path.relpath(os.path.join(directory, name), self.root)
                found.append(relative.replace(os.sep, "/"))
        return sorted(found)


class S3Store:
    """Objects in an S3-compatible bucket under a prefix."""

    def __init__(self, settings: StoreSettings) -> None:
        if BOTO3_IMPORT_ERROR is not None:
            raise StoreError(f"run_store.bucket: an S3 run store needs boto3, which cannot be imported "
                             f"({BOTO3_IMPORT_ERROR}); install it (pip install boto3) where the module runs, or use "
                             "a directory (run_store.path)", field="run_store.bucket", value=settings.bucket)
        self.settings = settings
        self.bucket = settings.bucket or ""
        self.prefix = f"{settings.prefix}/" if settings.prefix else ""
        verify = settings.ca_bundle if settings.ca_bundle and settings.validate_certs else settings.validate_certs
        self.client = boto3.client(
            "s3", endpoint_url=settings.endpoint_url, region_name=settings.region or "us-east-1",
            aws_access_key_id=settings.access_key, aws_secret_access_key=settings.secret_key,
            aws_session_token=settings.session_token, verify=verify,
            config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 5, "mode": "standard"}))

    def locate(self, key: str) -> str:
        return f"s3://{self.bucket}/{self.prefix}{key}"

    def check(self) -> None:
        """The endpoint answers, the credentials are accepted and the bucket exists."""
        self._call("reach", "", self.client.head_bucket, Bucket=self.bucket)

    def put(self, key: str, text: str) -> None:
        self._call("write", key, self.client.put_object, Bucket=self.bucket, Key=self.prefix + key,
                   Body=text.encode("utf-8"), ContentType="application/json")

    def get(self, key: str) -> Optional[str]:
        try:
            answer = self.client.get_object(Bucket=self.bucket, Key=self.prefix + key)
            return answer["Body"].read().decode("utf-8")
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return None
            raise self._error("read", key, exc) from exc
        except BotoCoreError as exc:
            raise self._error("read", key, exc) from exc

    def keys(self, prefix: str) -> list[str]:
        found = []
        pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=self.prefix + prefix)
        try:
            for page in pages:
                found.extend(item["Key"][len(self.prefix):] for item in page.get("Contents") or [])
        except (ClientError, BotoCoreError) as exc:
            raise self._error("list", prefix, exc) from exc
        return sorted(found)

    def _call(self, verb: str, key: str, function, **kwargs) -> None:
        try:
            function(**kwargs)
        except (ClientError, BotoCoreError) as exc:
            raise self._error(verb, key, exc) from exc

    def _error(self, verb: str, key: str, exc: Exception) -> StoreError:
        return StoreError(f"run_store: cannot {verb} {self.locate(key)} ({self.settings.describe()}): {exc}. Check "
                          "the bucket exists, endpoint_url, and that the credentials (access_key/secret_key or "
                          "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY) may read and write it",
                          field="run_store.bucket", value=self.bucket)


def open_store(settings: StoreSettings) -> ObjectStore:
    return DirectoryStore(settings.path) if settings.path else S3Store(settings)
