# A Rack-style request loop (issue 31): 60,000 requests of parsed
# parameters, rows rendered by ERB or JSON, a response cache and a set of
# session ids; what vmheap-run --record was checked on by hand
# (bench/RESULTS.md, "Recording malloc traces").
require 'json'; require 'erb'; require 'set'; require 'digest'; require 'time'
tpl = ERB.new("<ul><% rows.each do |r| %><li><%= r[:name] %> <%= r[:total] %></li><% end %></ul>")
cache = {}
seen = Set.new
60_000.times do |i|
  env = { 'PATH_INFO' => "/orders/#{i % 500}", 'QUERY_STRING' => "page=#{i % 7}&sort=desc", 'HTTP_COOKIE' => "sid=#{Digest::SHA256.hexdigest(i.to_s)[0, 16]}" }
  params = env['QUERY_STRING'].split('&').map { |kv| kv.split('=') }.to_h
  rows = (1..(5 + i % 20)).map { |k| { name: "item-#{k}-#{params['page']}", total: (k * 1.25).round(2) } }
  body = i.even? ? tpl.result(binding) : JSON.generate(rows: rows, at: Time.at(i).utc.iso8601)
  cache[env['PATH_INFO']] = body if i % 3 == 0
  seen << env['HTTP_COOKIE']
  seen.clear if seen.size > 5_000
end
puts cache.size
