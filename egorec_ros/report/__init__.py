"""Human-facing reports of a task directory (HTML)."""
