"""`kubectl jobflow ui`: a live local web view of JobFlows and their DAGs.

layout (the DAG drawing, pure) and rows/detail/actions (the documents and buttons, pure) decide;
cache (informers), backend (the API calls) and server (HTTP, token, event streams) do the I/O;
command wires them for the plugin. static/ is what the browser runs, shipped in the package.
"""
