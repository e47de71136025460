"""ADK events and OpenTelemetry spans turned into our trace."""
