/*
 * What a submit asks the cluster before anything is staged, as one shell
 * fragment: every dataset path (test -e), each declared input of a skill
 * bank bundle (test -d or test -f by its type), the image's squashfs magic, the
 * partition's MaxTime and the shape of its nodes, whether a results folder
 * the bundle names holds a run already (a status.json, or a checkpoint
 * *.pth, *.ckpt or *.tlt, within three levels as NVIDIA's SLURM backend
 * looks, ptm/ and inputs/ left out), each answer an "@@" line
 * that checks_read turns back into facts. The submit judges the facts
 * (engine/submit/submit.c: the messages naming the field and the value).
 *
 * With a gate, the same fragment also ends non-zero when an answer could
 * stop the job, so it can run first in the launch's own script
 * (engine/submit/stage.h: stage_gate) and nothing is written or submitted unless
 * every check passed: the checks cost no command of their own. The gate is
 * cautious: it opens only on answers it is sure the judgement passes (a
 * time limit it cannot read, a node line of another form: closed), and a
 * closed gate's facts go to the same judgement, which says why, or finds
 * nothing wrong and lets the submit go the long way. It judges no time
 * against the partition's MaxTime beyond its existence: a caller folds the
 * checks only for a job whose time any partition allows (at most the
 * packaged 4 hours).
 */
#ifndef TAOTOP_ENGINE_CHECKS_H
#define TAOTOP_ENGINE_CHECKS_H

#include <stddef.h>

struct buf;

/* What is asked about. */
struct check_ask {
	const char *const *datasets;	/* paths on the cluster */
	size_t		 ndatasets;
	const char	*image;		/* the .sqsh the job runs */
	const char	*image_dir;	/* where a conversion writes it, or NULL */
	const char	*partition;
	int		 nodes;		/* the job's shape, for the gate */
	int		 gpus_per_node;
	const char	*results_dir;	/* a folder that must hold no run, or NULL */
	/* The skill bank's declared inputs (engine/submit/bank.h): each
	 * path tested as a folder (test -d) or a file (test -f). Any missing
	 * closes the gate, an optional one too: the long way's judgement
	 * then leaves it out of the spec and the mounts before staging. */
	const char *const *inputs;
	const int	*input_folder;
	size_t		 ninputs;	/* at most CHECK_MAX_INPUTS */
};

#define CHECK_MAX_INPUTS	64
enum { INPUT_OK, INPUT_MISSING, INPUT_WRONG_TYPE };

/* One partition of a list (SLURM_PARTITION=a,b), as sinfo describes it:
 * the judgement checks each for the job's time and shape. */
struct part_facts {
	char	name[64];
	double	max_h;		/* its time limit; <= 0: unreadable */
	int	nodes;		/* its nodes, all states */
	int	gpus;		/* per node; -1: unknown, 0: none */
};

#define CHECK_MAX_PARTS	32

/* What the answers said. */
struct check_facts {
	size_t	missing;	/* the first dataset missing, or SIZE_MAX */
	int	image_state;	/* 1 ok, -1 not squashfs, 0 missing, -2 unknown */
	/* Why the image, or the images folder, is unsafe to run or write
	 * (a code of engine/config/rootsafe.h), or "": it is not. */
	char	image_unsafe[48];
	char	image_dir_unsafe[48];
	double	max_h;		/* the partition's time limit; <= 0: no partition */
	int	part_nodes;	/* -1: unknown */
	int	part_gpus;	/* per node; -1: unknown */
	/* A run's file found in results_dir (a status.json, a checkpoint),
	 * or "": none. */
	char	results_run[512];
	/* For a list of partitions (a comma in check_ask.partition): each
	 * that exists, in sinfo's order; max_h, part_nodes and part_gpus are
	 * then unused. */
	struct part_facts parts[CHECK_MAX_PARTS];
	size_t	nparts;
	/* The cluster's partitions, as sinfo -o %R lists them, one space
	 * after each ("" when not asked or none): named when the partition
	 * asked for is not one of them. */
	char	partitions[512];
	/* Each declared input's answer: INPUT_OK, INPUT_MISSING, or
	 * INPUT_WRONG_TYPE (a file where a folder was declared, or the
	 * other way). */
	unsigned char inputs[CHECK_MAX_INPUTS];
};

/* One shell line asking everything, its answers on standard output. A
 * list of partitions is asked of one sinfo, a line per partition. */
void checks_command(const struct check_ask *a, struct buf *cmd);
/* The same answers, then the gate: lines that end with status 0 only when
 * every answer lets the job pass; for a list of partitions, every one of
 * them (one that could not run the job closes it: leaving it out is the
 * long way's judgement). */
void checks_gate(const struct check_ask *a, struct buf *cmd);
/* The "@@" lines of out (other lines ignored) into f. */
void checks_read(const char *out, size_t ndatasets, struct check_facts *f);
/* SLURM's [D-]H:MM:SS, MM:SS or M in hours; 0 unknown, 1e9 UNLIMITED. */
double checks_slurm_hours(const char *s);

#endif
