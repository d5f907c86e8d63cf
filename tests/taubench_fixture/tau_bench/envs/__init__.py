raise ImportError("tau_bench.envs.__init__ must not run")
