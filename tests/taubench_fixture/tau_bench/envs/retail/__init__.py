raise ImportError("tau_bench.envs.retail.__init__ must not run (it imports the LLM user)")
