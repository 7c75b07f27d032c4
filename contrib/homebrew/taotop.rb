# Homebrew formula for taotop (macOS and Linuxbrew).
#
#   brew install ./contrib/homebrew/taotop.rb           the release tarball
#   brew install --HEAD ./contrib/homebrew/taotop.rb    the main branch
#
# taotop builds against Homebrew's ncurses (keg-only: Homebrew puts its
# pkg-config folder on PKG_CONFIG_PATH for the build), libssh, cJSON and
# libyaml; the code asks for POSIX.1-2008 only (make portable-check), with
# the few platform calls in src/util/compat.c.
#
# url and sha256 are the release's: `make formula` (after tagging, see
# docs/releasing.md) makes the tarball and writes both here. The tarball
# does not hold this file, so committing it leaves the tarball's bytes.
class Taotop < Formula
  desc "Terminal monitor and CLI for NVIDIA TAO training jobs on SLURM clusters over SSH"
  homepage "https://github.com/taotop/taotop"
  url "https://github.com/taotop/taotop/releases/download/v0.2.0/taotop-0.2.0.tar.gz"
  sha256 "a21ee6eae4cd68844ddb15533760d747282a3ba86d24a53a90da099f71b06112"
  license "Apache-2.0"
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
    # The release as the tarball says it; a HEAD build may add its commit.
    if build.head?
      assert_match(/^taotop \d+\.\d+\.\d+/, shell_output("#{bin}/taotop --version"))
    else
      assert_equal "taotop #{version}\n", shell_output("#{bin}/taotop --version")
    end
    # The verb table, from the binary itself (what the completions use).
    assert_match "preflight", shell_output("#{bin}/taotop --help")
    # The data folder found beside the binary: every theme offered.
    assert_match "ocean256", shell_output("#{bin}/taotop __complete 2 taotop --theme")
    # The example bundle as shipped, with no cluster set up: refused with
    # the words that say what to do (exit 2), not a missing template.
    output = shell_output("env -u TAOTOP_SHARE -u SLURM_HOSTNAME HOME=#{testpath} " \
                          "#{bin}/taotop submit --dry-run #{pkgshare}/templates/example.spec.yaml 2>&1", 2)
    assert_match "no cluster is configured yet: run 'taotop init'", output
  end
end
