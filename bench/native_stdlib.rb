# The native bench's Ruby stdlib workload (bench/native_bench.sh): rounds
# of JSON, ERB, Psych, Ripper and Zlib, each allocating through malloc
# from deep C stacks (issue 25's measure of the tracker's Ruby cost).
# usage: ruby native_stdlib.rb [ROUNDS]
require 'json'
require 'erb'
require 'psych'
require 'ripper'
require 'zlib'

rounds = (ARGV[0] || 20).to_i
data = (1..2000).map do |i|
  { 'id' => i, 'name' => "item#{i}", 'tags' => %w[a b c], 'price' => i * 1.5,
    'nested' => { 'x' => [i, i.to_s] } }
end
tpl = ERB.new("<% items.each do |it| %><li><%= it['name'] %>: <%= it['price'] %></li>\n<% end %>")
src = File.read(File.join(RbConfig::CONFIG['rubylibdir'], 'erb.rb'))
items = data
rounds.times do
  s = JSON.generate(data)
  JSON.parse(s)
  tpl.result(binding)
  Psych.load(Psych.dump(data.first(300)))
  Ripper.sexp(src)
  Zlib::Inflate.inflate(Zlib::Deflate.deflate(s))
end
