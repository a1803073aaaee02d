"""Where the run store is, checked before anything is read or written: the ``run_store`` option (a directory
``path``, or an S3 ``bucket`` with the options amazon.aws users know) and the ``run_id`` that names one run.

Credentials left out fall back to the usual AWS variables (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
``AWS_SESSION_TOKEN``, ``AWS_ENDPOINT_URL``, ``AWS_REGION``), which the AWX/AAP Amazon Web Services credential
injects, then to boto3's own chain (instance profile, web identity).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional
from urllib.parse import urlparse

from ansible_collections.descheduler.fleet.plugins.module_utils.errors import FleetError

# The argument spec of the store options, shared by the modules that read or write a run (doc fragment run_store).
RUN_STORE_ARG_SPEC: dict[str, dict] = {
    "run_store": dict(type="dict", options=dict(
        path=dict(type="path"),
        bucket=dict(type="str"),
        prefix=dict(type="str", default=""),
        endpoint_url=dict(type="str"),
        region=dict(type="str"),
        access_key=dict(type="str", no_log=True),
        secret_key=dict(type="str", no_log=True),
        session_token=dict(type="str", no_log=True),
        validate_certs=dict(type="bool", default=True),
        ca_bundle=dict(type="path"),
    )),
    "run_id": dict(type="str"),
}

RUN_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
# S3 bucket names (AWS rules; MinIO and the others follow them): 3-63 lowercase letters, digits, dots and hyphens.
BUCKET_PATTERN = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
S3_ONLY = ("endpoint_url", "region", "access_key", "secret_key", "session_token", "ca_bundle")


class StoreError(FleetError):
    """A run store option that is wrong, or a store that refuses: names the field, the value and the fix."""

    def __init__(self, message: str, *, field: str, value: Any = None, details: Optional[dict] = None) -> None:
        super().__init__(message)
        self.field = field
        self.value = value
        self.details = details or {}


@dataclass(frozen=True)
class StoreSettings:
    """A checked store location: ``path`` (a directory) or ``bucket`` (S3), never both."""

    path: Optional[str] = None
    bucket: Optional[str] = None
    prefix: str = ""
    endpoint_url: Optional[str] = None
    region: Optional[str] = None
    access_key: Optional[str] = None
    secret_key: Optional[str] = None
    session_token: Optional[str] = None
    validate_certs: bool = True
    ca_bundle: Optional[str] = None

    def describe(self) -> str:
        if self.path:
            return f"directory {self.path}"
        where = f" at {self.endpoint_url}" if self.endpoint_url else ""
        return f"s3://{self.bucket}/{self.prefix}{where}"


def check_run_id(run_id: Any, field: str = "run_id") -> str:
    """The run id, checked: it becomes part of every object's name."""
    if not isinstance(run_id, str) or not RUN_ID_PATTERN.match(run_id):
        raise StoreError(f"{field}: {run_id!r} is not a run id; use 1-128 letters, digits, '.', '_' or '-', starting "
                         "with a letter or digit (the AWX workflow job id, or a date such as 2026-11-26T1200)",
                         field=field, value=run_id)
    return run_id


def store_settings(options: Optional[Mapping[str, Any]], environ: Optional[Mapping[str, str]] = None,
                   field: str = "run_store") -> StoreSettings:
    """The store ``options`` checked (every problem fails here, before any read or write), with the AWS variables of
    ``environ`` (the process environment by default) for what the options leave out."""
    environ = os.environ if environ is None else environ
    options = {key: value for key, value in (options or {}).items() if value not in (None, "")}
    path, bucket = options.get("path"), options.get("bucket")
    if bool(path) == bool(bucket):
        raise StoreError(f"{field}: give exactly one of path (a directory on storage every job can reach) or bucket "
                         "(an S3-compatible bucket)", field=field,
                         value={"path": path, "bucket": bucket})
    if path:
        return _directory_settings(options, field)
    return _s3_settings(options, environ, field)


def _directory_settings(options: Mapping[str, Any], field: str) -> StoreSettings:
    path = str(options["path"])
    extra = sorted(name for name in (*S3_ONLY, "prefix") if options.get(name))
    if extra:
        raise StoreError(f"{field}: {', '.join(extra)} are options of an S3 store (bucket), not of a directory; "
                         "remove them or give bucket instead of path", field=f"{field}.{extra[0]}",
                         value=options[extra[0]])
    if not os.path.isabs(path):
        raise StoreError(f"{field}.path: {path!r} is relative; each AWX job runs in its own directory, so give an "
                         "absolute path on storage every job slice can reach", field=f"{field}.path", value=path)
    return StoreSettings(path=os.path.normpath(path))


def _s3_settings(options: Mapping[str, Any], environ: Mapping[str, str], field: str) -> StoreSettings:
    bucket = str(options["bucket"])
    if not BUCKET_PATTERN.match(bucket) or ".." in bucket:
        raise StoreError(f"{field}.bucket: {bucket!r} is not an S3 bucket name; use 3-63 lowercase letters, digits, "
                         "'.' and '-', starting and ending with a letter or digit (only the bucket: put the folder in "
                         "prefix)", field=f"{field}.bucket", value=bucket)
    prefix = str(options.get("prefix") or "").strip("/")
    if any(part in ("", ".", "..") for part in prefix.split("/")) and prefix:
        raise StoreError(f"{field}.prefix: {prefix!r} has an empty, '.' or '..' segment; give a folder such as "
                         "descheduler/runs", field=f"{field}.prefix", value=options.get("prefix"))
    endpoint = options.get("endpoint_url") or environ.get("AWS_ENDPOINT_URL_S3") or environ.get("AWS_ENDPOINT_URL")
    if endpoint:
        parsed = urlparse(str(endpoint))
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise StoreError(f"{field}.endpoint_url: {endpoint!r} is not an http(s) URL; give the S3 endpoint such as "
                             "https://minio.example.com:9000, or leave it out for AWS", field=f"{field}.endpoint_url",
                             value=endpoint)
    access = options.get("access_key") or environ.get("AWS_ACCESS_KEY_ID")
    secret = options.get("secret_key") or environ.get("AWS_SECRET_ACCESS_KEY")
    if bool(access) != bool(secret):
        missing = "secret_key" if access else "access_key"
        raise StoreError(f"{field}.{missing}: an access key needs its secret key (and the other way round); give both "
                         "(or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), or neither to use boto3's credential "
                         "chain", field=f"{field}.{missing}", value=None)
    return StoreSettings(
        bucket=bucket, prefix=prefix, endpoint_url=str(endpoint) if endpoint else None,
        region=options.get("region") or environ.get("AWS_REGION") or environ.get("AWS_DEFAULT_REGION"),
        access_key=access, secret_key=secret,
        session_token=(options.get("session_token") or environ.get("AWS_SESSION_TOKEN")
                       or environ.get("AWS_SECURITY_TOKEN")),
        validate_certs=bool(options.get("validate_certs", True)), ca_bundle=options.get("ca_bundle"))
