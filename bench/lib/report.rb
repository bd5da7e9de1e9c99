# bench/lib/report.rb - the table of medians and ratios, against the
# targets, as Markdown (printed, and pasted into bench/RESULTS.md).

class Report
	Row = Struct.new(:figure, :measured, :against, :ratio, :target, :verdict)

	attr_reader :rows

	def initialize
		@rows = []
	end

	def self.secs(s)
		return "missing" if s.nil?
		s < 1 ? format("%.1f ms", s * 1000) : format("%.2f s", s)
	end

	def self.ms(s)
		s.nil? ? "missing" : format("%.1f ms", s * 1000)
	end

	def self.mb(b)
		b.nil? ? "missing" : format("%.1f MB", b / 1e6)
	end

	# A row comparing `a` (measured) with `b` (against).  kind :fraction
	# prints a/b, kind :speedup prints b/a.  `target` is [text, test on
	# the ratio] or nil.
	def add(figure, a, b, unit:, kind:, target: nil)
		fmt = Report.method(unit)
		text, test = target
		if a.nil? || b.nil? || a.zero? || b.zero?
			@rows << Row.new(figure, fmt.call(a), fmt.call(b), "missing", text.to_s, "-")
			return
		end
		r = kind == :fraction ? a.to_f / b : b.to_f / a
		rtext = if kind == :speedup then format("%.1fx", r)
			elsif r < 1 then format("%.3f (1/%.1f)", r, 1 / r)
			else format("%.2f", r)
			end
		verdict = test ? (test.call(r) ? "met" : "MISSED") : ""
		@rows << Row.new(figure, fmt.call(a), fmt.call(b), rtext, text.to_s, verdict)
	end

	# A row comparing two growths in bytes, `a` against `b` (b > 0); `a`
	# may be zero or negative.
	def add_growth(figure, a, b, target:)
		text, test = target
		if a.nil? || b.nil? || b <= 0
			@rows << Row.new(figure, Report.mb(a), Report.mb(b), "missing", text, "-")
			return
		end
		r = a.to_f / b
		@rows << Row.new(figure, format("%+.1f MB", a / 1e6), format("%+.1f MB", b / 1e6),
				 format("%.1f%%", r * 100), text, test.call(r) ? "met" : "MISSED")
	end

	def missing_count
		@rows.count { |r| r.ratio == "missing" }
	end

	def table
		head = Row.members.map(&:to_s)
		lines = ["| #{head.join(' | ')} |", "|#{head.map { '---' }.join('|')}|"]
		@rows.each { |r| lines << "| #{r.to_a.join(' | ')} |" }
		lines.join("\n")
	end

	# The machine, as RESULTS.md states it.  The commit is BENCH_COMMIT's
	# when set (a tree exported with git archive has no .git).
	def self.machine(src)
		cpuinfo = File.read("/proc/cpuinfo") rescue ""
		meminfo = File.read("/proc/meminfo") rescue ""
		{ "nproc" => `nproc`.strip,
		  "cpu" => cpuinfo[/^model name\s*:\s*(.*)$/, 1] || "?",
		  "mem_mb" => meminfo[/^MemTotal:\s*(\d+)/, 1].to_i / 1024,
		  "kernel" => `uname -r`.strip, "ruby" => RUBY_DESCRIPTION,
		  "jq" => `jq --version 2>/dev/null`.strip,
		  "date" => Time.now.utc.strftime("%Y-%m-%d %H:%M UTC"),
		  "commit" => ENV["BENCH_COMMIT"] ||
			      `git -C #{src} rev-parse --short HEAD 2>/dev/null`.strip,
		  "load" => File.read("/proc/loadavg").split.first(3).join(" ") }
	end
end
