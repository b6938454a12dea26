"""L3: live state vs intent, as findings rendered to text, JSON or JUnit."""
