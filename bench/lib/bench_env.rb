# bench/lib/bench_env.rb - the settings the Ruby benchmarks read from the
# environment (each script's header lists them).  `include BenchEnv` at
# the top level makes them plain constants.
module BenchEnv
	SRC = File.expand_path(ENV["VMHEAP_SRC"] || File.join(__dir__, "..", ".."))
	BUILD = File.expand_path(ENV["VMHEAP_BUILD"] || File.join(SRC, "build"), SRC)
	OBJECTS = Integer(ENV["BENCH_OBJECTS"] || 3_000_000)
	RUNS = Integer(ENV["BENCH_RUNS"] || 3)
	TIMEOUT = Integer(ENV["BENCH_TIMEOUT"] || 900)
	CONSOLE = File.join(BUILD, "bin", "vmheap-console")
	AGENT_DIR = File.join(BUILD, "ruby") # vmheap_agent.so

	# BENCH_DIR, else BUILD/name.
	def self.dir(name)
		File.expand_path(ENV["BENCH_DIR"] || File.join(BUILD, name), SRC)
	end
end
