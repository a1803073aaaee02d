"""The run store: what one fleet run (a dry run, its evict step) leaves for the next workflow node, whatever AWX job
slice ran each cluster. A directory on shared storage or an S3-compatible bucket; one object per cluster, so slices
running in parallel never write the same object. See docs/awx-slicing.md."""
