/*
 * TAO's status.json: one JSON object per line, appended as training goes
 * ("status": STARTED, RUNNING, SUCCESS, FAILURE, SKIPPED; "message", "epoch",
 * "max_epoch", "eta", "kpi"). The last line with a status is what counts.
 */
#ifndef TAOTOP_ENGINE_TAOSTATUS_H
#define TAOTOP_ENGINE_TAOSTATUS_H

#include <stddef.h>

struct tao_status {
	char	status[16];	/* last status word, "" if none seen */
	char	*message;	/* last message, or NULL */
	int	 epoch, max_epoch;	/* -1 when not reported */
	char	eta[32];
	char	*kpi;		/* the last "kpi" object, as compact JSON, or NULL */
	/* One numeric KPI per epoch, for a sparkline: "loss" when reported,
	 * else the first numeric KPI seen. A later value for the same epoch
	 * replaces the earlier one. */
	char	 metric[32];
	double	*series;
	int	*series_epoch;
	size_t	 nseries;
	size_t	 lines, bad_lines;
};

void tao_status_init(struct tao_status *ts);
/* Feed whole lines (text may end mid-line: that part is ignored). */
void tao_status_feed(struct tao_status *ts, const char *text, size_t len);
void tao_status_free(struct tao_status *ts);

#endif
