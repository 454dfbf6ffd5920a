"""Names `make lint`'s unused-code check (hack/unused_code.py, vulture) must not report: each is used by
something vulture cannot see, said on its line. Reviewed entry by entry (issue 44); add one only with
its why. Read by vulture as source, never run (`_` stands for any object: vulture matches names).
"""
# ruff: noqa: B018, F821

# -- called by the standard library's servers (http.server, socketserver): hooks by name ----------------
_.do_GET  # BaseHTTPRequestHandler dispatches GET (manager/healthz.py, webhook/server.py, kubectl_jobflow/ui/server.py)
_.do_POST  # the same for POST (webhook/server.py, ui/server.py)
_.do_PUT  # webhook/server.py answers 405 for it
_.do_PATCH  # webhook/server.py answers 405 for it
_.do_DELETE  # webhook/server.py answers 405 for it
_.log_message  # BaseHTTPRequestHandler's access log, overridden to go through structlog or nowhere
_.version_string  # BaseHTTPRequestHandler's Server header, overridden (webhook/server.py)
_.server_version  # read by BaseHTTPRequestHandler.version_string (ui/server.py)
_.protocol_version  # read by BaseHTTPRequestHandler: HTTP/1.1 keep-alive (ui/server.py)
_.requestline  # BaseHTTPRequestHandler's log and error pages read it (set before an early error)
_.request_version  # the same
_.request_queue_size  # socketserver's listen() backlog
_.daemon_threads  # ThreadingMixIn: worker threads do not hold the process at exit
_.verify_request  # socketserver calls it before a request is handled (ui/server.py)
_.handle_error  # socketserver calls it when a handler raises
_.server_name  # HTTPServer.server_bind sets it; read by the handlers' environment (webhook/server.py)

# -- called by io and PyYAML ----------------------------------------------------------------------------
_.readinto  # io.RawIOBase's read path calls it (webhook/connection.py, ui/connections.py, jobflow/probes/net.py)
_.ignore_aliases  # PyYAML's Dumper calls it (jobflow_sdk/_yaml.py)

# -- Python's own protocol hooks, on a metaclass (kube/client_library.py's deferred classes) ---------
_.__call__
_.__instancecheck__
_.__subclasscheck__
_.__getattr__

# -- values of an API's closed set: read by value (`JobPhase(phase)`), never by name -------------------
_.ABORTING  # apis/constants.py JobPhase: a Volcano Job phase
_.RETAIN  # apis/constants.py RetainPolicy: upstream's `jobRetainPolicy: retain`

# -- upstream's flags, parsed so vc-controller-manager's command lines work, unused here (manager/config.py)
_.leader_elect_resource_lock
_.worker_threads_for_podgroup
_.worker_threads_for_gc
_.worker_threads_for_queue
_.worker_threads_for_cronjob
_.inherit_owner_annotations
_.feature_gates
_.scheduler_configs
_.shard_sync_period
_.enable_node_event_trigger
_.sharding_configmap
_.sharding_configmap_namespace
_.log_flush_frequency
_.logtostderr
_.log_dir
_.log_file
_.log_file_max_size
_.alsologtostderr
_.legacy_stderr_threshold_behavior
_.add_dir_header
_.skip_headers
_.one_output
_.skip_log_headers
_.stderrthreshold
_.alsologtostderrthreshold
_.vmodule
_.log_backtrace_at
