"""tau-bench in toolscore's formats: a checkout's domain as a spec, a documents environment
and cases (`importer`), and its saved trajectories as outputs lines (`results`). The
checkout's code is read with `ast` here and run only at replay time (`checkout`)."""

from toolscore.taubench.importer import TauBenchImport, import_taubench, write_import
from toolscore.taubench.results import convert_results

__all__ = ["TauBenchImport", "convert_results", "import_taubench", "write_import"]
