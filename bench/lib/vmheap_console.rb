# bench/lib/vmheap_console.rb - vmheap-console -p PID -e COMMAND against
# the benchmarked VM.
require_relative "timed_process"

class VmheapConsole
	Reply = Struct.new(:ok, :wall, :text)

	def initialize(console:, pid:, dir:, timeout:)
		@console = console
		@pid = pid
		@dir = dir
		@timeout = timeout
	end

	# Run one command; the reply's text and the call's wall time.
	def run(command)
		out = File.join(@dir, "console.out")
		env = { "TMPDIR" => @dir, "VMHEAP_AGENT_TMPDIR" => @dir }
		t0 = TimedProcess.now
		pid = Process.spawn(env, @console, "-p", @pid.to_s, "-e", command,
				    out: out, err: [:child, :out], pgroup: true)
		status = TimedProcess.wait(pid, @timeout)
		Reply.new(status&.success?, TimedProcess.now - t0, File.read(out))
	end

	def fork_mode(on)
		run("set config.dump.fork #{on}")
	end

	def dump(name)
		run("set system.memory.dump #{name}")
	end

	# The seconds a dump reply reports ("..., in 1.234 s", "1.234s",
	# "seconds: 1.234", "seconds=1.234"), or nil.
	def self.reply_seconds(text)
		m = text.match(/seconds?["']?\s*[:=]\s*([0-9]+(?:\.[0-9]+)?)/i) ||
		    text.match(/([0-9]+(?:\.[0-9]+)?)\s*(?:s|sec|secs|seconds)\b/i)
		m && m[1].to_f
	end
end
