/*
 * TAO's status.json (tao-pytorch core/loggers/api_logging.py and
 * core/decorators/workflow.py): one JSON object per line, appended as the
 * action goes ("status": STARTED, RUNNING, SUCCESS, FAILURE, SKIPPED;
 * "message", "date" M/D/YYYY and "time" H:M:S unpadded, epoch lines with
 * "epoch", "max_epoch", "time_per_epoch" and "eta" as Python's
 * str(timedelta), "kpi" once set). json.dumps writes a diverging loss as
 * bare NaN, Infinity or -Infinity: such a line is kept, the value NAN or
 * +-INFINITY.
 *
 * Where the file is: tao_status_places. Which line decides the end (the
 * verdict), in order, each line moving it:
 *   STARTED                          none (a run starts, or starts again)
 *   SUCCESS, SKIPPED                 success (TF-era containers, TAO's API)
 *   RUNNING "<Task> finished successfully."   success (TAO PyTorch, the
 *                                    action's words: "Train finished
 *                                    successfully.")
 *   FAILURE                          failure, with its message
 *   any other line                   a failure is taken back (a logged
 *                                    ERROR writes FAILURE in a run that
 *                                    goes on); a success stays (TAO's
 *                                    cloud upload line may follow it)
 *
 * Epochs as the user counts them (epoch 3 of 80). TAO's versions differ
 * (core/callbacks/loggers.py): 5.0/5.2 count from 1 with max_epoch =
 * num_epochs; 5.5 from 0 with max_epoch = num_epochs; 6.0 to 7.0.1 use
 * Lightning's 0-based current_epoch with max_epoch = num_epochs - 1 and
 * add step and max_step. The rule, from the lines alone: until a line
 * with epoch 0 is seen, epochs count from 1 and are shown as written;
 * after one, the epoch is shown plus one, and max_epoch plus one too once
 * it is known to be the last epoch's number (a line with epoch ==
 * max_epoch, or any line with max_step), else as written. Every version
 * then ends at N of N, never N+1 of N or N-1 of N-1.
 *
 * The series' KPI: "loss", else "train_loss", else the first number seen
 * (a better one starting the series over); a kpi without its own epoch
 * (TAO's "Train metrics generated.") is the last epoch line's.
 */
#ifndef TAOTOP_ENGINE_TAOSTATUS_H
#define TAOTOP_ENGINE_TAOSTATUS_H

#include <stddef.h>
#include <time.h>

#include "engine/slurm/state.h"
#include "engine/store/series.h"

enum tao_verdict {
	TAO_VERDICT_NONE = 0,	/* no final line (yet) */
	TAO_VERDICT_SUCCESS,
	TAO_VERDICT_FAILURE,
};

struct tao_status {
	char	status[16];	/* last status word, "" if none seen */
	char	*message;	/* last message, or NULL */
	/* As the user counts them (3 of 80); -1 when not reported. */
	int	 epoch, max_epoch;
	int	 raw_epoch, raw_max;	/* as the file has them, -1 unknown */
	int	 zero_based;	/* an epoch 0 line was seen (a caller that knows
				 * it from earlier lines may set it before feeding) */
	int	 max_is_last;	/* max_epoch is the last epoch's number */
	long	 eta_s;		/* TAO's eta in seconds, -1 unknown */
	char	 eta[32];	/* eta_s as [D-]HH:MM:SS, "" unknown */
	time_t	 at;		/* the last line's date and time (local), 0 unknown */
	/* One numeric KPI per epoch (chosen as above), for a sparkline. A
	 * later value for the same epoch replaces the earlier one; NaN and
	 * infinities are kept as such. */
	char	 metric[32];
	double	*series;
	int	*series_epoch;
	size_t	 nseries;
	/* Every numeric key of "kpi" and "graphical", per epoch as the
	 * user counts them (engine/store/series.h says which value an epoch
	 * keeps, and the bound); a kpi key wins over a graphical one of the
	 * same name on one line. */
	struct series_set curves;
	size_t	 lines, bad_lines;
	enum tao_verdict verdict;
	char	*verdict_line;	/* the deciding line's message ("Train finished
				 * successfully.", FAILURE's), or the status word */
	/* The action whose success words count ("train"; TAO Deploy's task
	 * name too: "trt_evaluate"); "" takes any "<Word> finished successfully." */
	char	 task[2][32];
	/* Cosmos's structured status: only SUCCESS is a success (the
	 * guardrails: COMPLETED is provisional until it says SUCCESS); no
	 * "finished successfully." line, no SKIPPED. */
	int	 success_only;
	char	*partial;	/* a line not yet ended, kept for the next feed */
	size_t	 npartial;
};

void tao_status_init(struct tao_status *ts);
/* The action the file is of (NULL: any), set after init: its success
 * words, TAO Deploy's task name's too. */
void tao_status_set_task(struct tao_status *ts, const char *action);
/* Feed text as it comes: a line counts once its newline has come, so a
 * file fed in pieces, cut anywhere, gives what it gives fed whole. */
void tao_status_feed(struct tao_status *ts, const char *text, size_t len);
/* Forget the lines fed, keep the task (a requeued run starts over). */
void tao_status_reset(struct tao_status *ts);
void tao_status_free(struct tao_status *ts);

/* Python's str(timedelta): "0:01:02.345678", "1 day, 2:03:04", "3 days,
 * 0:00:01", "-1 day, 23:59:59". 0 with whole seconds, -1 if it is none. */
int tao_status_timedelta_parse(const char *s, double *secs);

/* TAO Deploy's name for an action's task folder (evaluate -> trt_evaluate,
 * inference -> trt_inference), or the action itself. */
const char *tao_status_deploy_task(const char *action);
/* Whether an image is a TAO Deploy one (its name says "deploy"). */
int tao_status_image_is_deploy(const char *image);

/*
 * Where TAO writes an action's status file, most likely first (caller
 * frees each and the array; *n set): the spec's <action>.results_dir
 * (spec_dir, or NULL), <results_dir>/<task> with task the action or TAO
 * Deploy's name for it (the image's kind says which first), and the
 * TF-era <results_dir>/status.json. What no rule names is found by
 * tao_status_search_cmd.
 */
char **tao_status_places(const char *results_dir, const char *action, const char *image,
    const char *spec_dir, size_t *n);

/* How far below the results folder the search looks (NVIDIA's SLURM
 * backend: find -maxdepth 3). */
#define TAO_STATUS_SEARCH_DEPTH	3

/* What the verdict means for the job: 1 with *to (Done or Error) and
 * *message (caller frees) in TAO's words ("status.json: Train finished
 * successfully.", "status.json: FAILURE: Configuration error: ..."); 0
 * when there is no final line. */
int tao_status_judge(const struct tao_status *ts, enum tao_state *to, char **message);

#endif
