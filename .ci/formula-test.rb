# frozen_string_literal: true

# Runs Formula/headroom.rb's `test do` block for real, outside Homebrew, against a built
# binary: the formula is loaded as Ruby with a small stand-in for Homebrew's `Formula` DSL,
# and the block runs with Homebrew's own assertions (Minitest::Assertions, which
# Homebrew::Assertions includes) and its `shell_output` (backticks, then the exit status
# asserted). `brew test` failed on a schema name typed by hand; nothing ran the block.
#
#   ruby .ci/formula-test.rb FORMULA BIN_DIR MAN_DIR            the test block
#   ruby .ci/formula-test.rb FORMULA --service macos|linux      the service block, as JSON
#
# BIN_DIR holds `headroom`; MAN_DIR the man pages the formula installs (`man/`).
# Exit 0 when the block passes; 1 with Minitest's message when an assertion fails.
# Plain Ruby 2.6 (a Mac's /usr/bin/ruby) and later; minitest is a bundled gem of each.

require "English"
require "json"
require "pathname"
require "tmpdir"
require "minitest"
require "minitest/assertions"

# Homebrew's ENV takes a Pathname as a value (formulae write `ENV["HOME"] = testpath`).
module EnvTakesPathnames
  def []=(key, value)
    super(key, value&.to_s)
  end
end
ENV.singleton_class.prepend(EnvTakesPathnames)

# The class methods a formula calls at load time, recorded and otherwise ignored.
class Formula
  class << self
    attr_reader :test_block, :service_block

    %i[desc homepage license head url sha256 version revision depends_on uses_from_macos
       livecheck bottle on_macos on_linux on_arm on_intel].each do |m|
      define_method(m) { |*_args, **_kw, &_blk| nil }
    end

    def test(&block)
      @test_block = block
    end

    def service(&block)
      @service_block = block
    end

    def inherited(sub)
      super
      (@subclasses ||= []) << sub
    end

    def subclasses
      @subclasses || []
    end
  end

  include Minitest::Assertions
  attr_accessor :assertions

  def initialize(bin, man)
    @bin = Pathname(bin)
    @man = Pathname(man)
    @assertions = 0
  end

  def bin
    @bin
  end
  def opt_bin
    @bin
  end
  def man1
    @man
  end
  def var
    Pathname("/usr/local/var")
  end
  def testpath
    (@testpath ||= Pathname(Dir.mktmpdir("formula-test")))
  end

  def shell_output(cmd, result = 0)
    assert_path_exists cmd, "Pathname '#{cmd}' does not exist!" if cmd.is_a?(Pathname)
    output = `#{cmd}`
    assert_equal result, $CHILD_STATUS.exitstatus, "`#{cmd}`: #{output}"
    output
  end

  def pipe_output(cmd, input = nil, result = nil)
    output = IO.popen(cmd, "w+") do |pipe|
      pipe.write(input) unless input.nil?
      pipe.close_write
      pipe.read
    end
    assert_equal result, $CHILD_STATUS.exitstatus unless result.nil?
    output
  end

  def run_test
    Dir.chdir(testpath) do
      home = ENV.fetch("HOME", nil)
      ENV["HOME"] = testpath.to_s # as `brew test` does
      instance_exec(&self.class.test_block)
    ensure
      ENV["HOME"] = home
    end
  end
end

# The service block's DSL: each call recorded, `on_macos`/`on_linux` taken for `os`.
class ServiceRecorder
  attr_reader :calls

  def initialize(formula, os)
    @formula = formula
    @os = os
    @calls = {}
  end

  def plist_name
    "homebrew.mxcl.headroom"
  end
  def service_name
    "homebrew.headroom"
  end
  def opt_bin
    @formula.opt_bin
  end
  def var
    @formula.var
  end
  def on_macos
    (yield if @os == "macos")
  end
  def on_linux
    (yield if @os == "linux")
  end

  def method_missing(name, *args, **kw)
    plain = ->(a) { a.is_a?(Array) ? a.map(&plain) : (a.is_a?(Pathname) ? a.to_s : a) }
    @calls[name] = kw.empty? ? plain.call(args.length == 1 ? args.first : args) : kw
    nil
  end

  def respond_to_missing?(*)
    true
  end
end

formula_file, bin_dir, man_dir = ARGV
abort "usage: ruby #{$PROGRAM_NAME} FORMULA BIN_DIR MAN_DIR | FORMULA --service OS" unless formula_file && bin_dir
load File.expand_path(formula_file)
klass = Formula.subclasses.first or abort "#{formula_file}: no formula class"
if bin_dir == "--service"
  os = man_dir or abort "--service needs macos or linux"
  recorder = ServiceRecorder.new(klass.new("/opt/homebrew/opt/headroom/bin", "/man"), os)
  recorder.instance_exec(&klass.service_block)
  puts JSON.generate(recorder.calls)
  exit 0
end
abort "#{formula_file}: no test block" unless klass.test_block
f = klass.new(File.expand_path(bin_dir), File.expand_path(man_dir || "man"))
begin
  f.run_test
rescue Minitest::Assertion => e
  warn "formula test failed: #{e.message}"
  warn e.backtrace.grep(/#{Regexp.escape(File.basename(formula_file))}/).first.to_s
  exit 1
end
puts "formula test passed: #{f.assertions} assertions"
