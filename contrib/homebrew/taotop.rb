# Homebrew formula for taotop (macOS and Linuxbrew).
#
#   brew install --build-from-source ./contrib/homebrew/taotop.rb
#   brew install --HEAD ./contrib/homebrew/taotop.rb
#
# taotop builds against Homebrew's ncurses (keg-only: Homebrew puts its
# pkg-config folder on PKG_CONFIG_PATH for the build), libssh, cJSON and
# libyaml; the code asks for POSIX.1-2008 only (make portable-check), with
# the few platform calls in src/util/compat.c.
class Taotop < Formula
  desc "Terminal monitor and CLI for NVIDIA TAO training jobs on SLURM clusters over SSH"
  # The repository has no public address yet: homepage, url and head are
  # where it is meant to be published; adjust them with the first release.
  homepage "https://github.com/taotop/taotop"
  url "https://github.com/taotop/taotop/archive/refs/tags/v0.1.0.tar.gz"
  # Fill in on release: `shasum -a 256` of the tag's tarball.
  sha256 "0000000000000000000000000000000000000000000000000000000000000000"
  # license: none declared in the repository yet; add it with the first release.
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
    assert_match "taotop #{version}", shell_output("#{bin}/taotop --version")
    # The verb table, from the binary itself (what the completions use).
    assert_match "status", shell_output("#{bin}/taotop --help")
    # Bad input is refused with a message, without any cluster.
    output = shell_output("#{bin}/taotop status 2>&1", 2)
    assert_match "taotop", output
  end
end
