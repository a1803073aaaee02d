"""Documentation of ``page_size`` and ``watch_list`` (module_utils/cluster/args.py LISTING_ARG_SPEC), for the
modules that list a live cluster. Use it with ``extends_documentation_fragment: [descheduler.fleet.listing]``."""

from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  page_size:
    description:
      - Objects per page when listing a live cluster in pages (C(limit)/C(continue) paging).
      - With O(watch_list=true), pages are used only for a kind the server would not stream.
    type: int
    default: 500
  watch_list:
    description:
      - Read each kind of a live cluster (Pods, Nodes, Namespaces, ...) as one stream, as client-go informers do
        since Kubernetes 1.35 (a watch with C(sendInitialEvents=true) whose initial events are the list, ended by a
        bookmark). The API server streams it from its watch cache without building pages, and it is parsed while
        it arrives. A large cluster is thus read sooner (50,000 pods in 14-16 s instead of 18 s on two cores), with
        one request per kind, and without the API server's memory growing for the pages.
      - When the server refuses it (Kubernetes before 1.27, or the C(WatchList) feature off), the user may list
        but not C(watch) the kind, or the stream ends early, that kind is read in pages of O(page_size) instead.
        Grant C(watch) beside C(list) to get the stream.
      - V(false) always reads in pages (for example through a proxy that holds back streamed answers).
    type: bool
    default: true
"""
