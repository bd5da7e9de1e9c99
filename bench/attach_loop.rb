# bench/attach_loop.rb - a Ruby request loop for bench/attach_cost.sh: it
# serves "requests" (a few hashes and strings, about 0.1 ms of work, then
# a 1 ms wait as for a client) for SECONDS seconds and writes the wall time (CLOCK_REALTIME, s)
# at which each one ended to OUT, one a line.  It prints "ready" once it
# runs.  usage: ruby bench/attach_loop.rb SECONDS OUT
seconds = Float(ARGV[0])
out = ARGV[1]
ends = []
window = []
$stdout.sync = true
puts "ready"
stop = Process.clock_gettime(Process::CLOCK_MONOTONIC) + seconds
i = 0
while Process.clock_gettime(Process::CLOCK_MONOTONIC) < stop
  i += 1
  20.times do |k|
    req = { id: i, path: "/items/#{(i + k) % 1000}", h: { "x" => k.to_s } }
    window << "<li>#{req[:path]}</li>" * 2
  end
  window.shift(20) if window.size > 20_000
  sleep 0.001
  ends << Process.clock_gettime(Process::CLOCK_REALTIME)
end
File.write(out, ends.map { |t| format("%.6f", t) }.join("\n") + "\n")
