# bench/ruby_names.rb - what edge and root names cost in a Ruby dump: file
# bytes per object and fork-mode dump time, with names and without
# (config.dump.names), on one heap in one run.
#
#   ruby bench/ruby_names.rb            (make bench-ruby-names runs it)
#
# Environment: BENCH_OBJECTS (default 3000000: a third of them BenchItem,
# each holding a String in @name and a Hash in @attrs, all in one global
# Array), BENCH_RUNS (dumps of each kind, alternating; medians; default
# 3), BENCH_DIR (default $VMHEAP_BUILD/bench-ruby-names), VMHEAP_BUILD,
# VMHEAP_SRC, BENCH_TIMEOUT (seconds per command, default 900).
#
# Prints one table: objects, file bytes, bytes per object and dump seconds
# (the agent's own figure: fork, the child's GC, the walk and the write;
# median and fastest), names on and off, and the ratio.  Exits 1 when a
# figure is missing.
require "fileutils"
require "rbconfig"
require_relative "lib/figures"
require_relative "lib/heap_vm"
require_relative "lib/timed_process"
require_relative "lib/vmheap_console"
require_relative "lib/bench_env"

include BenchEnv # SRC, BUILD, OBJECTS, RUNS, TIMEOUT, CONSOLE, AGENT_DIR
DIR = BenchEnv.dir("bench-ruby-names")

LOG = ->(msg) { $stderr.puts("bench-ruby-names: #{msg}") }
FIG = Figures.new(log: LOG)

FileUtils.mkdir_p(DIR)
Dir.glob(File.join(DIR, "*.vmheap")).each { |f| FileUtils.rm_f(f) }
vm = HeapVM.new(ruby: RbConfig.ruby, heap_rb: File.join(SRC, "bench", "heap.rb"),
		items: [OBJECTS / 3, 10].max, dir: DIR, agent_dir: AGENT_DIR, log: LOG)
console = VmheapConsole.new(console: CONSOLE, pid: vm.pid, dir: DIR, timeout: TIMEOUT)
begin
	RUNS.times do |r|
		[true, false].each do |on|
			key = on ? "names" : "plain"
			set = console.run("set config.dump.names #{on}")
			(FIG.miss(key, "set config.dump.names #{on}: #{set.text.strip}"); next) unless set.ok
			name = "#{key}-#{r}.vmheap"
			reply = console.dump(name)
			path = File.join(DIR, name)
			unless reply.ok && File.exist?(path)
				FIG.miss(key, "dump failed: #{reply.text.strip[0, 300]}")
				next
			end
			FIG.add("#{key}.objects", reply.text[/([0-9]+) objects/, 1].to_i)
			FIG.add("#{key}.bytes", File.size(path))
			FIG.add("#{key}.secs", VmheapConsole.reply_seconds(reply.text) || reply.wall)
			FileUtils.rm_f(path)
		end
	end
ensure
	vm.quit
end

m = FIG.medians
%w[names plain].each { |k| m["#{k}.secs_min"] = FIG.samples["#{k}.secs"].min }
rows = [["objects", "objects", "%d"], ["file bytes", "bytes", "%d"],
	["bytes per object", nil, "%.2f"], ["fork dump, s (median)", "secs", "%.3f"],
	["fork dump, s (fastest)", "secs_min", "%.3f"]]
puts "| #{RUNS} runs, medians | names | no names | names / no names |"
puts "| --- | ---: | ---: | ---: |"
rows.each do |label, k, fmt|
	a, b = if k
		       [m["names.#{k}"], m["plain.#{k}"]]
	       else
		       [m["names.bytes"] && m["names.bytes"].to_f / m["names.objects"],
			m["plain.bytes"] && m["plain.bytes"].to_f / m["plain.objects"]]
	       end
	ratio = a && b && b > 0 ? format("%.2f", a.to_f / b) : "missing"
	puts "| #{label} | #{a ? format(fmt, a) : 'missing'} | #{b ? format(fmt, b) : 'missing'} | #{ratio} |"
end
exit(FIG.missing.empty? ? 0 : 1)
