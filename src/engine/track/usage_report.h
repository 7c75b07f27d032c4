/*
 * `taotop report`'s part on one cluster: accounting's list of the user's
 * jobs in the window, one remote command, matched with taotop's records
 * (engine/store/report.h adds them up).
 */
#ifndef TAOTOP_ENGINE_USAGE_REPORT_H
#define TAOTOP_ENGINE_USAGE_REPORT_H

struct conn;
struct record_store;
struct report;

/* Add cluster's jobs of the last since_s seconds to r. 0, or -1 with
 * *err (the command could not run, or sacct said no). */
int usage_report_gather(struct conn *c, struct record_store *st, const char *cluster,
    long since_s, struct report *r, char **err);

#endif
