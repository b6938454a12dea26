"""L1: the jinja2 environment and renderers; templates only print what intent decided."""
