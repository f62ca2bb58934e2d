"""Driving a real client (Claude Code, Codex, …) against a local endpoint that stands in for its model
API: the client's own requests go to the run's provider through the answer cache, and the conversation
ends at its first pick, so no tool is ever run."""
