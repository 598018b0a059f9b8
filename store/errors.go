package store

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/ragd/ragd"
)

// unavailableError is a database failure that says nothing about the request: the server is
// down, restarting, out of connections or out of disk. It matches ragd.ErrUnavailable, so the API
// answers 503 with Retry-After rather than 500; the cause stays for the log.
type unavailableError struct {
	what  string
	cause error
}

func (e *unavailableError) Error() string   { return "database " + e.what + ": " + e.cause.Error() }
func (e *unavailableError) Unwrap() []error { return []error{ragd.ErrUnavailable, e.cause} }

// diskFullWindow is how long readiness reports a full disk after PostgreSQL last said so, unless a
// write succeeds first.
const diskFullWindow = 30 * time.Second

// health remembers what the store learned of the database from its errors, for readiness.
type health struct {
	diskFullAt atomic.Int64 // unix nanoseconds of the last disk-full error; 0 after a good write
}

// classify turns a database error into the error kind it is: unavailability (connection lost or
// refused, server shutting down, too many connections, disk full, I/O error) or bad input (text
// PostgreSQL cannot store, such as a NUL character). Other errors pass unchanged.
func (h *health) classify(err error) error {
	if err == nil || errors.Is(err, ragd.ErrUnavailable) || errors.Is(err, ragd.ErrInvalid) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch class := pgErr.Code[:2]; {
		case pgErr.Code == "22021" || pgErr.Code == "22P05":
			// character_not_in_repertoire, untranslatable_character: a NUL, or text the server
			// encoding cannot hold. The caller sent it.
			return ragd.Invalidf("text", "holds a character that cannot be stored (a NUL byte?)")
		case pgErr.Code == "53100":
			h.diskFullAt.Store(time.Now().UnixNano())
			return &unavailableError{"disk full", err}
		case class == "08" || class == "53" || class == "58" ||
			pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03":
			return &unavailableError{"unavailable", err}
		}
		return err
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	if errors.As(err, &ce) || errors.As(err, &ne) || pgconn.Timeout(err) || pgconn.SafeToRetry(err) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ENOENT) ||
		strings.Contains(err.Error(), "conn closed") || strings.Contains(err.Error(), "closed pool") {
		return &unavailableError{"unavailable", err}
	}
	return err
}

// diskFull reports whether PostgreSQL said its disk was full within diskFullWindow with no
// successful write since.
func (h *health) diskFull() bool {
	at := h.diskFullAt.Load()
	return at != 0 && time.Since(time.Unix(0, at)) < diskFullWindow
}

// wrote records a committed write: the disk took it.
func (h *health) wrote() { h.diskFullAt.Store(0) }

// classifyDB is a DB whose every error is classified.
type classifyDB struct {
	db DB
	h  *health
}

func (d classifyDB) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	t, err := d.db.Exec(ctx, sql, args...)
	return t, d.h.classify(err)
}

func (d classifyDB) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	rows, err := d.db.Query(ctx, sql, args...)
	if err != nil {
		return rows, d.h.classify(err)
	}
	return classifyRows{rows, d.h}, nil
}

func (d classifyDB) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return classifyRow{d.db.QueryRow(ctx, sql, args...), d.h}
}

func (d classifyDB) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	n, err := d.db.CopyFrom(ctx, table, columns, src)
	return n, d.h.classify(err)
}

func (d classifyDB) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	return classifyBatch{d.db.SendBatch(ctx, b), d.h}
}

func (d classifyDB) Begin(ctx context.Context) (pgx.Tx, error) {
	tx, err := d.db.Begin(ctx)
	return tx, d.h.classify(err)
}

type classifyRows struct {
	pgx.Rows
	h *health
}

func (r classifyRows) Err() error { return r.h.classify(r.Rows.Err()) }
func (r classifyRows) Scan(dest ...any) error {
	return r.h.classify(r.Rows.Scan(dest...))
}

type classifyRow struct {
	row pgx.Row
	h   *health
}

func (r classifyRow) Scan(dest ...any) error { return r.h.classify(r.row.Scan(dest...)) }

type classifyBatch struct {
	pgx.BatchResults
	h *health
}

func (b classifyBatch) Exec() (pgconn.CommandTag, error) {
	t, err := b.BatchResults.Exec()
	return t, b.h.classify(err)
}

func (b classifyBatch) Query() (pgx.Rows, error) {
	rows, err := b.BatchResults.Query()
	if err != nil {
		return rows, b.h.classify(err)
	}
	return classifyRows{rows, b.h}, nil
}

func (b classifyBatch) QueryRow() pgx.Row { return classifyRow{b.BatchResults.QueryRow(), b.h} }
func (b classifyBatch) Close() error      { return b.h.classify(b.BatchResults.Close()) }
