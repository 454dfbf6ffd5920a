"""`kubectl jobflow ui`: a live local web view of JobFlows and their DAGs.

layout (the DAG drawing, pure and bounded) and rows/detail/actions (the documents and buttons,
pure) decide; request (what a request says, bounded parsers), auth (the token and its cookie) and
connections (deadlines and caps) guard the server; cache (informers), backend (the API calls) and
server (HTTP, event streams) do the I/O; launch opens the browser through a private redirect file;
command wires them for the plugin. static/ is what the browser runs, shipped in the package.
docs/ui.md has every limit.
"""
