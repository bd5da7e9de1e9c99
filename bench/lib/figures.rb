# bench/lib/figures.rb - the samples of a benchmark run, their medians,
# and the figures that could not be measured (with the reason).

# Every figure is a list of samples under a key ("dump.fork",
# "time.histo", "rss.histo", ...); a missing figure carries a reason.
class Figures
	attr_reader :samples, :missing

	def initialize(log: ->(msg) { $stderr.puts(msg) })
		@samples = Hash.new { |h, k| h[k] = [] }
		@missing = {}
		@log = log
	end

	def add(key, value)
		@samples[key] << value
	end

	# Record that `key` could not be measured; the first reason wins.
	def miss(key, why)
		@missing[key] ||= why
		@log.call("#{key}: missing: #{why}")
	end

	# Forget a figure (its samples were wrong, or were only a by-product).
	def drop(key)
		@samples.delete(key)
	end

	def medians
		@samples.transform_values { |v| Figures.median(v) }
	end

	def self.median(xs)
		return nil if xs.nil? || xs.empty?
		s = xs.sort
		n = s.size
		n.odd? ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2.0
	end
end
