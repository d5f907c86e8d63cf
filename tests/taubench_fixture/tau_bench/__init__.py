# Imports what the fixture does not have, as tau-bench's imports litellm: never run.
import not_installed_litellm_stand_in  # noqa: F401
