# bash completion for taotop: verbs, options, cluster names from the config
# and job ids from the local records, all asked of taotop itself
# (`taotop __complete`, made from its verb table; no network).
# Installed by `make install` in $(PREFIX)/share/bash-completion/completions,
# where bash-completion finds it; or source this file from ~/.bashrc.
_taotop()
{
	local cur=${COMP_WORDS[COMP_CWORD]} bin=${COMP_WORDS[0]} words
	# The taotop being typed, if it runs; else the one on PATH.
	command -v -- "$bin" >/dev/null 2>&1 || bin=taotop
	words=$("$bin" __complete "$COMP_CWORD" "${COMP_WORDS[@]}" 2>/dev/null) || return 0
	if [ "$words" = "@files" ]; then
		compopt -o filenames 2>/dev/null
		local IFS=$'\n'
		# shellcheck disable=SC2207
		COMPREPLY=($(compgen -f -- "$cur"))
		return 0
	fi
	# Matched here, not by compgen -W, which expands each word (a
	# command substitution in a cluster's name or a record's field would
	# run): a candidate is kept as it is when it starts with what is typed.
	local w
	COMPREPLY=()
	while IFS= read -r w; do
		[[ $w == "$cur"* ]] && COMPREPLY+=("$w")
	done <<<"$words"
}
complete -F _taotop taotop
