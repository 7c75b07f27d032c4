# Homebrew formula for taotop (macOS and Linuxbrew).
#
#   brew install --HEAD ./contrib/homebrew/taotop.rb
#
# taotop builds against Homebrew's ncurses (keg-only: Homebrew puts its
# pkg-config folder on PKG_CONFIG_PATH for the build), libssh, cJSON and
# libyaml; the code asks for POSIX.1-2008 only (make portable-check), with
# the few platform calls in src/util/compat.c.
class Taotop < Formula
  desc "Terminal monitor and CLI for NVIDIA TAO training jobs on SLURM clusters over SSH"
  # A head-only formula: taotop has no released tarball yet, so there is no
  # url and no sha256 to pin (a made-up checksum would only fail the
  # download). With the first release tag, add `url` and its `sha256`
  # (`shasum -a 256` of the tag's tarball) above `head`.
  homepage "https://github.com/taotop/taotop"
  head "https://github.com/taotop/taotop.git", branch: "main"

  depends_on "pkgconf" => :build
  depends_on "cjson"
  depends_on "libssh"
  depends_on "libyaml"
  depends_on "ncurses"

  def install
    # PREFIX for the binary and the data folder, MANPREFIX for the man page;
    # the shell completions go where Homebrew's bash-completion and zsh look.
    system "make", "install", "PREFIX=#{prefix}", "MANPREFIX=#{man}",
           "BASHCOMPDIR=#{bash_completion}", "ZSHCOMPDIR=#{zsh_completion}"
  end

  test do
    # A HEAD build's version is "HEAD-<commit>": check the name only.
    assert_match(/^taotop /, shell_output("#{bin}/taotop --version"))
    # The verb table, from the binary itself (what the completions use).
    assert_match "status", shell_output("#{bin}/taotop --help")
    # Bad input is refused with a message, without any cluster.
    output = shell_output("#{bin}/taotop status 2>&1", 2)
    assert_match "taotop", output
  end
end
