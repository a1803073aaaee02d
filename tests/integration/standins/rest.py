"""Raw JSON over HTTP for the stand-ins: the `kubernetes` client's transport, no typed models, no discovery cache.

Stand-ins create and delete CRDs while they run; the dynamic client's discovery cache would go stale, so they address
objects by path (`path("operators.coreos.com/v1alpha1", "subscriptions", namespace, name)`) and exchange plain dicts,
exactly as a controller built on client-go's dynamic client does.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from kubernetes.client.exceptions import ApiException

MERGE_PATCH = "application/merge-patch+json"
CRD_API = "apiextensions.k8s.io/v1"


def path(api_version: str, plural: str, namespace: str | None = None, name: str | None = None,
         subresource: str | None = None) -> str:
    prefix = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
    parts = [prefix] + (["namespaces", namespace] if namespace else []) + [plural]
    parts += [name] if name else []
    parts += [subresource] if subresource else []
    return "/".join(parts)


def object_path(obj: dict[str, Any], plural: str, subresource: str | None = None) -> str:
    metadata = obj["metadata"]
    return path(obj["apiVersion"], plural, metadata.get("namespace"), metadata["name"], subresource)


LONGEST_POLL = 0.5  # seconds between two checks of wait_until, at most


class Rest:
    """get/list/create/update/patch/delete of JSON objects; a missing object reads as None."""

    def __init__(self, api_client: Any) -> None:
        self.api_client = api_client
        self.writes = 0  # requests other than GET, so a loop can tell a pass that changed something

    def request(self, method: str, url: str, body: Any = None, query: Iterable[tuple[str, Any]] = (),
                content_type: str = "application/json") -> Any:
        """One call; ApiException (with .status and .body) for an HTTP error, as the typed client raises it."""
        if method != "GET":
            self.writes += 1
        response = self._send(method, url, body, query, content_type, timeout=30)
        data = response.read()
        if not 200 <= response.status <= 299:
            raise _api_exception(response, data)
        return json.loads(data) if data else None

    def _send(self, method: str, url: str, body: Any, query: Iterable[tuple[str, Any]], content_type: str,
              timeout: float) -> Any:
        """The `kubernetes` client's response, its body not read yet."""
        method, full_url, headers, body, post_params = self.api_client.param_serialize(
            method=method, resource_path=url, query_params=list(query), body=body, auth_settings=["BearerToken"],
            header_params={"Accept": "application/json", "Content-Type": content_type})
        return self.api_client.call_api(method, full_url, header_params=headers, body=body,
                                        post_params=post_params, _request_timeout=timeout)

    def get(self, url: str) -> dict[str, Any] | None:
        try:
            return self.request("GET", url)
        except ApiException as error:
            if error.status == 404:
                return None
            raise

    def list(self, url: str, label_selector: str | None = None) -> list[dict[str, Any]]:
        """The items; empty when the type is not served (404), as a controller sees a CRD that is gone."""
        query = [("labelSelector", label_selector)] if label_selector else []
        try:
            return self.request("GET", url, query=query).get("items") or []
        except ApiException as error:
            if error.status == 404:
                return []
            raise

    def create(self, url: str, body: dict[str, Any]) -> dict[str, Any]:
        return self.request("POST", url, body)

    def watch(self, url: str, resource_version: str, timeout_seconds: int) -> Iterator[dict[str, Any]]:
        """The events of a watch of the collection `url` after `resource_version`, until the server ends it after
        `timeout_seconds` (or the caller stops reading: the connection is closed, not reused half-read)."""
        query = [("watch", "true"), ("resourceVersion", resource_version), ("timeoutSeconds", timeout_seconds)]
        response = self._send("GET", url, None, query, "application/json", timeout=timeout_seconds + 30)
        stream = response.response  # urllib3's, not read yet
        try:
            if not 200 <= response.status <= 299:
                raise _api_exception(response, stream.read())
            pending = b""
            for chunk in stream.stream(amt=None, decode_content=False):
                *lines, pending = (pending + chunk).split(b"\n")
                yield from (json.loads(line) for line in lines if line.strip())
        finally:
            stream.close()
            stream.release_conn()

    def create_if_absent(self, url: str, body: dict[str, Any]) -> dict[str, Any] | None:
        """Create; None when it already exists. Read first, as a controller checks its cache before it creates: a
        create refused as a conflict still costs the API server an admission pass and etcd a transaction, and the
        stand-ins' loops ask several times a second."""
        if self.get(f"{url}/{body['metadata']['name']}") is not None:
            return None
        try:
            return self.create(url, body)
        except ApiException as error:
            if error.status == 409:
                return None
            raise

    def update(self, url: str, body: dict[str, Any]) -> dict[str, Any]:
        return self.request("PUT", url, body)

    def merge_patch(self, url: str, patch: dict[str, Any]) -> dict[str, Any] | None:
        try:
            return self.request("PATCH", url, patch, content_type=MERGE_PATCH)
        except ApiException as error:
            if error.status == 404:
                return None
            raise

    def delete(self, url: str, propagation: str = "Background") -> bool:
        """Delete; False when it was already gone."""
        body = {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": propagation}
        try:
            self.request("DELETE", url, body)
            return True
        except ApiException as error:
            if error.status == 404:
                return False
            raise

    def change(self, url: str, edit: Callable[[dict[str, Any]], None], attempts: int = 5) -> dict[str, Any] | None:
        """Read, edit in place, write back (PUT with the read resourceVersion); retried on a conflict (409).
        No write when the edit changed nothing; None when the object is gone."""
        for _attempt in range(attempts):
            current = self.get(url)
            if current is None:
                return None
            edited = json.loads(json.dumps(current))
            edit(edited)
            if edited == current:
                return current
            try:
                return self.update(url, edited)
            except ApiException as error:
                if error.status == 404:
                    return None
                if error.status != 409:
                    raise
        raise RuntimeError(f"{url}: still conflicting after {attempts} attempts")


def _api_exception(response: Any, data: Any) -> ApiException:
    error = ApiException(status=response.status, reason=response.reason)
    error.body = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    return error


def wait_until(check: Callable[[], Any], timeout: float = 120.0, interval: float = 0.1, what: str = "") -> Any:
    """The tests' one waiter: the first truthy value of `check()`; AssertionError naming `what` after `timeout`
    seconds. Checks come `interval` apart at first, each pause 1.5 times the last up to `LONGEST_POLL` (a check
    is an API request or more, and a long wait polled ten times a second costs CPU a loaded machine lacks)."""
    deadline = time.monotonic() + timeout
    pause = interval
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what or check}")
        time.sleep(pause)
        pause = min(pause * 1.5, max(interval, LONGEST_POLL))


# --- CustomResourceDefinitions ---------------------------------------------------------------------------------------


def crd_established(crd: dict[str, Any] | None) -> bool:
    conditions = ((crd or {}).get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions)


def install_crds(rest: Rest, crds: Iterable[dict[str, Any]], timeout: float = 60.0) -> list[str]:
    """Create the CRDs that are missing and wait until each is Established (a real API server serves a new CRD only
    then). A CRD still terminating from an earlier test is waited out first. Returns the names it created."""
    created = []
    for crd in crds:
        url = path(CRD_API, "customresourcedefinitions", name=crd["metadata"]["name"])
        existing = rest.get(url)
        if existing is not None and existing["metadata"].get("deletionTimestamp"):
            wait_crd_gone(rest, url, timeout, what=f"{url} to finish terminating")
            existing = None
        if existing is None and rest.create_if_absent(path(CRD_API, "customresourcedefinitions"), crd) is not None:
            created.append(crd["metadata"]["name"])
        wait_until(lambda u=url: crd_established(rest.get(u)), timeout, what=f"{url} to be Established")
    return created


def remove_crds(rest: Rest, names: Iterable[str], timeout: float = 60.0) -> None:
    """Delete CRDs (their objects go with them) and wait until they are gone."""
    urls = [path(CRD_API, "customresourcedefinitions", name=name) for name in names]
    for url in urls:
        rest.delete(url)
    for url in urls:
        wait_crd_gone(rest, url, timeout, what=f"{url} to be deleted")


# The API server's CRD finalizer deletes a CRD's objects before the CRD. When its first list meets a watch cache that
# is still starting (a CRD nobody has read yet: "storage is (re)initializing", KEP-4568), it records
# InstanceDeletionFailed and can sit for minutes before it retries (seen here: over two minutes, and a CI teardown
# timed out on it). Any update of the CRD requeues it at once, so the wait touches an annotation while that condition
# shows. Only the finalizer's timing changes: the objects still go first.
FINALIZER_REQUEUE_ANNOTATION = "descheduler-fleet.test/requeue-finalizer"
FINALIZER_REQUEUE_AFTER = 5.0


def wait_crd_gone(rest: Rest, url: str, timeout: float, what: str) -> None:
    """Wait until the CRD at `url` is gone, requeueing a stalled finalizer; the timeout names its Terminating
    condition."""
    deadline = time.monotonic() + timeout
    next_requeue = time.monotonic() + FINALIZER_REQUEUE_AFTER
    crd = rest.get(url)
    while crd is not None:
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}: {terminating_condition(crd)}")
        if time.monotonic() >= next_requeue and finalizer_stalled(crd):
            rest.merge_patch(url, {"metadata": {"annotations": {FINALIZER_REQUEUE_ANNOTATION: str(time.time())}}})
            next_requeue = time.monotonic() + FINALIZER_REQUEUE_AFTER
        time.sleep(0.1)
        crd = rest.get(url)


def terminating_condition(crd: dict[str, Any]) -> str:
    conditions = (crd.get("status") or {}).get("conditions") or []
    found = [c for c in conditions if c.get("type") == "Terminating"]
    if not found:
        return "no Terminating condition yet"
    return f"Terminating={found[0].get('status')} ({found[0].get('reason')}: {found[0].get('message')})"


def finalizer_stalled(crd: dict[str, Any]) -> bool:
    conditions = (crd.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Terminating" and c.get("reason") == "InstanceDeletionFailed" for c in conditions)
