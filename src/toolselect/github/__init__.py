"""Everything that talks to GitHub: workflow commands (stdout and the runner's files) and the
sticky PR comment (PyGithub). The Action's orchestration lives in `toolselect.action`."""
