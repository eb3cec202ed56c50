"""One way of writing a moment on every page (the admin, results, audits, monitor): ISO
8601's order, in the server's time zone (UTC), which no reader misreads as day/month."""

DATE_FORMAT = "Y-m-d"
DATETIME_FORMAT = "Y-m-d H:i"
SHORT_DATE_FORMAT = "Y-m-d"
SHORT_DATETIME_FORMAT = "Y-m-d H:i"
