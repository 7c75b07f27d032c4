# The execution block's lifecycle (a bundle's pre_commands, primary
# command, post_commands: the skill bank's executionContract), run by the
# job's step inside the container, once per task: taotop stages it as
# <job_dir>/lifecycle.sh for a bundle whose execution block has commands
# or launches by torchrun. Fixed text, run as it is by
# tests/unit/test_lifecycle.c (POSIX sh).
#
# Arguments: the primary command's words, as the job's script passes
# them. The bundle's commands arrive in the environment, each as the
# bundle wrote it: TAOTOP_PRE_COUNT and TAOTOP_PRE_1.., TAOTOP_POST_COUNT
# and TAOTOP_POST_1.., TAOTOP_POST_SCOPE (leader: task 0 only; all),
# TAOTOP_LAUNCHER (direct, torchrun) and TAOTOP_NPROC. A shell of the
# container (bash when it has one) runs each command.
#
# Exit status: the first failure's (a pre-command's, the primary
# command's own, a post-command's), 0 when all succeeded. A pre-command
# failing stops the task before the primary command; post-commands run
# only after it succeeded.

if command -v bash >/dev/null 2>&1; then
	taotop_shell=bash
else
	taotop_shell=sh
fi
taotop_rank=${SLURM_PROCID:-0}

# Run the commands TAOTOP_$1_1 .. TAOTOP_$1_<count>, in order; the first
# that fails ends the task with its code.
taotop_run_list() {
	taotop_k=1
	eval "taotop_n=\${TAOTOP_$1_COUNT:-0}"
	while [ "$taotop_k" -le "$taotop_n" ]; do
		eval "taotop_cmd=\${TAOTOP_$1_$taotop_k}"
		taotop_rc=0
		"$taotop_shell" -c "$taotop_cmd" || taotop_rc=$?
		if [ "$taotop_rc" != 0 ]; then
			echo "taotop: task $taotop_rank: $2 command $taotop_k of $taotop_n exited $taotop_rc" >&2
			exit "$taotop_rc"
		fi
		taotop_k=$((taotop_k + 1))
	done
}

taotop_run_list PRE pre

# torchrun in front of the primary command's words: one task a node, its
# node rank SLURM's task id, torchrun starting the processes. torchrun runs
# its script with Python (torch.distributed.run: [python, -u, script]): a
# .py as it is; "python -m mod" as torchrun's own -m; "python x.py" as x.py;
# any other program (a console script: the skill bank's Cosmos evaluate
# bundles run cosmos-rl-evaluate) with --no-python, run as it is.
if [ "${TAOTOP_LAUNCHER:-direct}" = torchrun ]; then
	case "$1" in
	*.py) ;;
	python|python3|python3.*|*/python|*/python3|*/python3.*)
		shift
		case "${1:-}" in
		-m|*.py) ;;
		*) set -- --no-python python3 "$@" ;;
		esac ;;
	*) set -- --no-python "$@" ;;
	esac
	set -- torchrun --nnodes="${SLURM_NNODES:-1}" --node_rank="$taotop_rank" \
		--nproc_per_node="${TAOTOP_NPROC:-1}" --master_addr="${MASTER_ADDR:-127.0.0.1}" \
		--master_port="${MASTER_PORT:-29500}" "$@"
fi

taotop_rc=0
"$@" || taotop_rc=$?
if [ "$taotop_rc" != 0 ]; then
	echo "taotop: task $taotop_rank: the command exited $taotop_rc: post-commands not run" >&2
	exit "$taotop_rc"
fi

if [ "${TAOTOP_POST_SCOPE:-leader}" = all ] || [ "$taotop_rank" = 0 ]; then
	taotop_run_list POST post
fi
exit 0
