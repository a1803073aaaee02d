"""Documentation of the run store options (module_utils/store/settings.py RUN_STORE_ARG_SPEC), for the modules that
read or write a fleet run in the store. Use it with
``extends_documentation_fragment: [descheduler.fleet.run_store]``."""

from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  run_store:
    description:
      - Where a fleet run's plans, summaries and evict results are kept, so that every AWX/AAP job slice and the
        next workflow node read the same run (AWX does not merge C(set_stats) across slices). See
        docs/awx-slicing.md.
      - Exactly one of O(run_store.path) (a directory) or O(run_store.bucket) (an S3-compatible bucket). Every option
        is checked before anything is read or written.
    type: dict
    suboptions:
      path:
        description:
          - An absolute directory on storage every job slice and workflow node can reach (NFS, a shared volume of the
            execution nodes). Each object is written atomically; each cluster has its own files.
        type: path
      bucket:
        description: An S3 (or S3-compatible, such as MinIO or Ceph RGW) bucket; it must exist.
        type: str
      prefix:
        description: The folder of the objects in the bucket, for example C(descheduler/runs).
        type: str
        default: ""
      endpoint_url:
        description:
          - The S3 endpoint of an S3-compatible server, for example C(https://minio.example.com:9000); requests use
            path-style addressing. Left out, C(AWS_ENDPOINT_URL_S3) or C(AWS_ENDPOINT_URL), else AWS itself.
        type: str
      region:
        description: The bucket's region. Left out, C(AWS_REGION) or C(AWS_DEFAULT_REGION), else C(us-east-1).
        type: str
      access_key:
        description:
          - The access key id. Left out, C(AWS_ACCESS_KEY_ID) (the AWX/AAP Amazon Web Services credential sets it),
            else boto3's credential chain (instance profile, web identity).
        type: str
      secret_key:
        description: The secret access key. Left out, C(AWS_SECRET_ACCESS_KEY). Given with O(run_store.access_key).
        type: str
      session_token:
        description: A session token of temporary credentials. Left out, C(AWS_SESSION_TOKEN) or C(AWS_SECURITY_TOKEN).
        type: str
      validate_certs:
        description: Verify the S3 endpoint's TLS certificate.
        type: bool
        default: true
      ca_bundle:
        description: A CA bundle that signed the S3 endpoint's certificate.
        type: path
  run_id:
    description:
      - The run, shared by every job slice of a dry run and by the evict step that follows it (the AWX/AAP workflow
        passes one value to all its nodes, for example its own job id). 1-128 letters, digits, C(.), C(_) or C(-).
    type: str
requirements:
  - boto3 (only for an S3 run store, O(run_store.bucket))
"""
