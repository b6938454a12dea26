"""L3: plan, push, verify and roll back across targets; results per target."""
