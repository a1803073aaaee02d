"""A real S3-compatible server for the run store tests: gofakes3 (tests/s3server, built once from its Go module and
cached like the control plane), serving S3 over HTTP on a free port of this worker's block, its objects in files.

    with S3Server(workdir) as server:      # bucket BUCKET exists
        server.run_store(prefix="runs")    # the run_store option of the roles and modules
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from controlplane import free_port
from standins.rest import wait_until

BUILD = Path(__file__).resolve().parents[1] / "s3server" / "build.sh"
BUCKET = "descheduler-runs"
# gofakes3 accepts any credentials (it checks the request's form, not the key); real ones are given all the same,
# the way a user gives them.
ACCESS_KEY, SECRET_KEY = "fleet-tests", "fleet-tests-secret"
START_TIMEOUT = 60


def build_s3_server() -> Path:
    completed = subprocess.run(["bash", str(BUILD)], stdout=subprocess.PIPE, stderr=None, text=True, check=False)
    if completed.returncode != 0:
        raise RuntimeError(f"tests/s3server/build.sh failed (exit {completed.returncode}); see its output above")
    return Path(completed.stdout.strip().splitlines()[-1]) / "gofakes3"


class S3Server:
    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.port = 0
        self.process: subprocess.Popen | None = None

    @property
    def endpoint_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def run_store(self, prefix: str = "") -> dict[str, Any]:
        return {"bucket": BUCKET, "prefix": prefix, "endpoint_url": self.endpoint_url, "access_key": ACCESS_KEY,
                "secret_key": SECRET_KEY}

    def client(self) -> Any:
        import boto3
        from botocore.config import Config

        return boto3.client("s3", endpoint_url=self.endpoint_url, region_name="us-east-1",
                            aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY,
                            config=Config(s3={"addressing_style": "path"}))

    def start(self) -> S3Server:
        binary = build_s3_server()
        self.port = free_port()
        data = self.workdir / "data"
        data.mkdir(parents=True, exist_ok=True)
        log = (self.workdir / "gofakes3.log").open("w")
        self.process = subprocess.Popen(
            [str(binary), "-backend", "fs", "-fs.path", str(data), "-fs.create", "-initialbucket", BUCKET,
             "-host", f"127.0.0.1:{self.port}"], stdout=log, stderr=subprocess.STDOUT)
        log.close()
        wait_until(self._answers, timeout=START_TIMEOUT, interval=0.2,
                   what=f"the S3 server on {self.endpoint_url} to list bucket {BUCKET}")
        return self

    def _answers(self) -> bool:
        if self.process is not None and self.process.poll() is not None:
            raise RuntimeError(f"the S3 server exited ({self.process.returncode}): "
                               f"{(self.workdir / 'gofakes3.log').read_text()[-2000:]}")
        try:
            self.client().list_objects_v2(Bucket=BUCKET)
        except Exception:  # not listening yet
            return False
        return True

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)

    def __enter__(self) -> S3Server:
        return self.start()

    def __exit__(self, *_exc: Any) -> None:
        self.stop()
