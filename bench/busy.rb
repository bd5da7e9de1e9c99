# bench/busy.rb - a busy Ruby program doing a fixed amount of work, for
# the idle cost of a loaded agent (bench/idle_cost.sh): N requests, each
# a few hashes and strings, the last 10000 kept (a cache), so the GC runs
# all the time.  usage: ruby bench/busy.rb N
n = Integer(ARGV[0] || 1_000_000)
window = []
n.times do |i|
  req = { id: i, path: "/items/#{i % 1000}",
          headers: { "accept" => "text/html", "x-id" => i.to_s } }
  body = "<li>#{req[:path]}</li>" * 4
  window << [req, body]
  window.shift if window.size > 10_000
end
puts window.size
