"""tau2-bench in toolscore's formats: a checkout's domain as a spec, a documents environment
and cases (`importer`), and its saved simulations as outputs lines (`results`). The
checkout is read as data here (its tools with `ast`, its tasks as JSON) and run only at
replay time (`checkout`)."""

from toolscore.tau2.importer import Tau2Import, import_tau2, write_import
from toolscore.tau2.results import convert_results

__all__ = ["Tau2Import", "convert_results", "import_tau2", "write_import"]
