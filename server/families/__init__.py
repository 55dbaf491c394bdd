"""One package or module per method family: its handler turns an admitted search (server/retrieval/request.py)
into a page laid out by server/retrieval/page_parts.py; the route table (server/routes.py) binds each."""
