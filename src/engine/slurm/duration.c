#include "engine/slurm/duration.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "util/xmalloc.h"

/* A run of at most 9 digits (no overflow, whatever the text); the end. */
static const char *number(const char *s, long *v)
{
	int n = 0;

	*v = 0;
	while (isdigit((unsigned char)s[n]) && n < 9)
		*v = *v * 10 + (s[n++] - '0');
	return n > 0 && !isdigit((unsigned char)s[n]) ? s + n : NULL;
}

int duration_parse(const char *s, long *secs)
{
	long part[3], days = 0;
	const char *p = s, *dash;
	int n = 0;

	if (s == NULL || *s == '\0')
		return -1;
	dash = strchr(s, '-');
	if (dash != NULL) {
		if ((p = number(s, &days)) == NULL || p != dash)
			return -1;
		p = dash + 1;
	}
	for (;;) {
		if ((p = number(p, &part[n])) == NULL)
			return -1;
		n++;
		if (*p == '\0')
			break;
		if (*p != ':' || n == 3)
			return -1;
		p++;
	}
	/* Without days: MM, MM:SS, HH:MM:SS; with days: D-HH, D-HH:MM,
	 * D-HH:MM:SS (sbatch(1), "--time"). */
	if (dash != NULL)
		*secs = part[0] * 3600 + (n > 1 ? part[1] * 60 : 0) + (n > 2 ? part[2] : 0);
	else if (n == 1)
		*secs = part[0] * 60;
	else if (n == 2)
		*secs = part[0] * 60 + part[1];
	else
		*secs = part[0] * 3600 + part[1] * 60 + part[2];
	*secs += days * 86400;
	return 0;
}

void duration_format(long secs, char *out, size_t len)
{
	long d = secs / 86400, part[3] = { secs / 3600 % 24, secs / 60 % 60, secs % 60 };
	char tmp[40];
	size_t n = 0;
	int i;

	/* By hand, not snprintf: a poll formats two of these per job row. */
	if (secs >= 0 && d > 0)
		n = (size_t)snprintf(tmp, sizeof(tmp), "%ld-", d);
	for (i = 0; secs >= 0 && i < 3; i++) {
		if (i > 0)
			tmp[n++] = ':';
		tmp[n++] = (char)('0' + part[i] / 10);
		tmp[n++] = (char)('0' + part[i] % 10);
	}
	if (len == 0)
		return;
	if (n > len - 1)
		n = len - 1;
	memcpy(out, tmp, n);
	out[n] = '\0';
}

void duration_normalise(const char *printed, char *out, size_t len, long *secs)
{
	if (duration_parse(printed, secs) == 0) {
		duration_format(*secs, out, len);
		return;
	}
	*secs = -1;
	snprintf(out, len, "%s", printed != NULL ? printed : "");
}

int duration_since_parse(const char *s, long *secs, char **err)
{
	static const struct { char unit; long secs; } units[] = {
		{ 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 }, { 'w', 7 * 86400 },
	};
	const char *end;
	long n;
	size_t i;

	if (s == NULL || (end = number(s, &n)) == NULL || end[0] == '\0' || end[1] != '\0') {
		*err = xasprintf("'%s' is not a span: a number and a unit, s, m, h, d or w "
		    "(7d, 12h, 90m)", s != NULL ? s : "");
		return -1;
	}
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (units[i].unit != end[0])
			continue;
		if (n < 1 || n > 366L * 86400 / units[i].secs) {
			*err = xasprintf("'%s' is out of range: from 1s to a year (366d)", s);
			return -1;
		}
		*secs = n * units[i].secs;
		return 0;
	}
	*err = xasprintf("'%s': the unit '%c' is none of s, m, h, d, w (7d, 12h, 90m)", s, end[0]);
	return -1;
}
