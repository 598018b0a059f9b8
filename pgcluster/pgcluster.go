// Package pgcluster runs a private PostgreSQL cluster for ragd's one-command local mode: when no
// database URL is configured, ragd keeps a cluster inside its data directory, runs it with the
// PostgreSQL installed on the machine (scripts/setup.sh installs it, with pgvector), reaches it
// over a Unix socket and stops it on shutdown.
//
// The cluster directory holds the data files (it is PGDATA) plus two additions: sock/, the only
// place the server listens (no TCP port is opened), and log/, the server logs. The superuser is
// "ragd" with "trust" authentication, which is acceptable only because of where the socket
// lives: PostgreSQL insists that the cluster directory be mode 0700 and owned by the server's
// OS user, so that user and root are the only ones who can reach the socket at all, and both
// can read the data files directly anyway. When ragd runs as root the server runs as
// Config.User, which on Debian is the "postgres" account that owns every cluster already.
package pgcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"math"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"
	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ErrNoPostgres means the PostgreSQL server programs were not found.
var ErrNoPostgres = errors.New("PostgreSQL server programs (initdb, pg_ctl, postgres) not found; " +
	"install PostgreSQL with scripts/setup.sh, or use an external database (--database-url)")

// ErrNoPgvector means the PostgreSQL in use lacks the pgvector extension.
var ErrNoPgvector = errors.New("the pgvector extension is not installed for this PostgreSQL; " +
	"install it with scripts/setup.sh")

const (
	// DefaultUser is the OS user the server runs as when ragd runs as root.
	DefaultUser = "postgres"

	// superuser is the cluster's superuser role, and database the database ragd uses.
	superuser = "ragd"
	database  = "ragd"
	// AppLogin is the role ragd's connection pools log in as: no superuser, no attribute, and
	// (once ragd's migrations ran, as the superuser) a member of ragd_app and nothing else, so a
	// session cannot switch to a role that owns the tables or bypasses row-level security.
	AppLogin = "ragd_login"

	// port only names the socket file (.s.PGSQL.5432); nothing listens on TCP.
	port = 5432

	// maxSocketPath is the longest Unix socket path: sizeof(sockaddr_un.sun_path) minus the NUL.
	maxSocketPath = 107

	// defaultTimeout bounds starting, stopping and waiting for the server when the context has
	// no deadline.
	defaultTimeout = time.Minute

	sockDirName  = "sock"
	logDirName   = "log"
	confFileName = "ragd.conf"
)

// Config configures Start.
type Config struct {
	// Dir is the cluster directory, such as <ragd data dir>/postgres. It is created if missing
	// and initialized with initdb when it has no PG_VERSION file. Required.
	Dir string

	// BinDir is the directory holding initdb, pg_ctl and postgres. Empty means find it:
	// `pg_config --bindir`, else the newest /usr/lib/postgresql/*/bin, else PATH.
	BinDir string

	// User is the OS user the server runs as when ragd runs as root, since PostgreSQL refuses
	// to run as root; otherwise the server runs as ragd's own user. Defaults to DefaultUser.
	User string

	// Detached leaves the server running after every process using it has gone, until Stop
	// (`ragd db start`). Otherwise the last ragd process using a server that ragd started stops
	// it. See owner.go.
	Detached bool

	// Settings are server settings (postgresql.conf names and values) for a server this Start
	// starts, such as fsync=off for throwaway test clusters. A server found running keeps its own.
	Settings map[string]string

	// Logger receives progress messages. Defaults to slog.Default().
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.User == "" {
		c.User = DefaultUser
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

func (c Config) validate() error {
	if c.Dir == "" {
		return errors.New("pgcluster: Config.Dir is required")
	}
	for name, value := range c.Settings {
		// pg_ctl hands the options to the server through a shell: keep them to safe characters.
		if !settingName.MatchString(name) || !settingValue.MatchString(value) {
			return fmt.Errorf("pgcluster: setting %s=%s: names are lower-case words, values letters, digits and ._-", name, value)
		}
	}
	return nil
}

var (
	settingName  = regexp.MustCompile(`^[a-z][a-z0-9_.]*$`)
	settingValue = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
)

// Cluster is a PostgreSQL cluster that Start made ready for use. Its methods are safe for
// concurrent use.
type Cluster struct {
	dir     string
	binDir  string
	version string
	account *account
	logger  *slog.Logger

	mu      sync.Mutex
	started bool         // this process started the server
	adopted bool         // this process found the server without users and took it over
	stops   bool         // this process stops the server when it leaves last (owner.go)
	users   *flock.Flock // held shared while this process uses the cluster
	closed  bool
}

// Start makes the cluster in cfg.Dir ready and returns it: it initializes the directory when
// it holds no cluster yet, starts the server unless it is running already (left over from a
// previous run, say: pg_ctl tells a live server from a stale postmaster.pid), waits until the
// server accepts connections, and makes sure the "ragd" database exists with the pgvector
// extension created in it. The process counts as a user of the cluster until Close; owner.go
// says who stops the server.
//
// It fails with ErrNoPostgres when PostgreSQL is not installed and with ErrNoPgvector when
// pgvector is not. The context bounds the whole operation; without a deadline, each wait for
// the server is limited to a minute.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	begin := time.Now()
	c, err := open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	l, err := c.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer l.Unlock()

	initialized, err := c.initialize(ctx)
	if err != nil {
		return nil, err
	}
	if err := c.configure(); err != nil {
		return nil, err
	}
	if err := c.ensureRunning(ctx, cfg.Settings); err != nil {
		return nil, err
	}
	err = c.settle(ctx, cfg.Detached)
	if err == nil {
		err = c.bootstrap(ctx)
	}
	if err == nil {
		err = c.join()
	}
	if err != nil {
		if c.started {
			// Do not leave behind a server nobody will stop.
			stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), defaultTimeout)
			defer cancel()
			if stopErr := c.stopServer(stopCtx); stopErr != nil {
				c.logger.WarnContext(ctx, "pgcluster: stopping PostgreSQL after a failed start", slog.Any("error", stopErr))
			}
		}
		return nil, err
	}

	c.logger.InfoContext(ctx, "pgcluster: PostgreSQL ready",
		slog.String("dir", c.dir),
		slog.String("bin_dir", c.binDir),
		slog.String("version", c.version),
		slog.Bool("initialized", initialized),
		slog.Bool("started", c.started),
		slog.Bool("adopted", c.adopted),
		slog.Bool("detached", cfg.Detached),
		slog.Duration("duration", time.Since(begin)),
	)
	return c, nil
}

// open checks cfg and finds what running the cluster needs, without touching the directory.
func open(ctx context.Context, cfg Config) (*Cluster, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("pgcluster: %w", err)
	}
	if sock := socketPath(dir); len(sock) > maxSocketPath {
		return nil, fmt.Errorf("pgcluster: socket path %s is %d bytes, over the %d-byte limit of Unix "+
			"sockets; use a shorter data directory (--data-dir)", sock, len(sock), maxSocketPath)
	}
	binDir, err := findBinDir(ctx, cfg.BinDir)
	if err != nil {
		return nil, err
	}
	version, err := serverVersion(ctx, binDir)
	if err != nil {
		return nil, err
	}
	acct, err := serverAccount(cfg.User)
	if err != nil {
		return nil, err
	}
	return &Cluster{dir: dir, binDir: binDir, version: version, account: acct, logger: cfg.Logger}, nil
}

// initialized reports whether the directory holds a cluster.
func (c *Cluster) initialized() bool {
	_, err := os.Stat(filepath.Join(c.dir, "PG_VERSION"))
	return err == nil
}

// URL returns the pgx connection string for the "ragd" database over the Unix socket, as the
// superuser: for migrations and administration.
func (c *Cluster) URL() string {
	return connString(filepath.Join(c.dir, sockDirName), database)
}

// AppURL returns the connection string for the "ragd" database as AppLogin, the unprivileged
// login ragd serves with.
func (c *Cluster) AppURL() string {
	return connStringAs(filepath.Join(c.dir, sockDirName), database, AppLogin)
}

// Close ends this process's use of the cluster. It stops the server when this process is the
// last ragd process using a server that ragd started for its own use (owner.go); stopping
// disconnects open sessions, so close connection pools first. Close is idempotent.
func (c *Cluster) Close(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	l, err := c.lock(ctx)
	if err != nil {
		// Leave anyway: the last user to leave stops the server, or the next to arrive adopts it.
		return errors.Join(err, c.leave())
	}
	defer l.Unlock()
	c.closed = true
	if err := c.leave(); err != nil || !c.stops {
		return err
	}
	used, err := c.inUse()
	if err != nil {
		return err
	}
	if used {
		c.logger.InfoContext(ctx, "pgcluster: leaving PostgreSQL running for the other ragd processes using it; the last one stops it",
			slog.String("dir", c.dir))
		return nil
	}
	// Someone may have detached the server (ragd db start) or replaced it since.
	rec, err := c.record()
	if err != nil || rec == nil || rec.Detached {
		return err
	}
	return c.stopServer(ctx)
}

// initialize creates the cluster directory and runs initdb in it unless it holds a cluster already,
// which it checks was made by the same major version. It reports whether it ran initdb.
func (c *Cluster) initialize(ctx context.Context) (bool, error) {
	// Parents get the usual 0755 so the server's user can pass through ones made here.
	if err := os.MkdirAll(filepath.Dir(c.dir), 0o755); err != nil {
		return false, fmt.Errorf("pgcluster: %w", err)
	}
	if err := c.account.checkTraversable(filepath.Dir(c.dir)); err != nil {
		return false, err
	}
	if err := os.Mkdir(c.dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return false, fmt.Errorf("pgcluster: %w", err)
	}

	pgVersion, err := os.ReadFile(filepath.Join(c.dir, "PG_VERSION"))
	switch {
	case err == nil:
		if have, want := strings.TrimSpace(string(pgVersion)), majorVersion(c.version); have != want {
			return false, fmt.Errorf("pgcluster: the cluster in %s was made by PostgreSQL %s, but %s has "+
				"PostgreSQL %s; upgrade it with pg_upgrade, point the bin directory at PostgreSQL %s, "+
				"or move the directory away to start afresh", c.dir, have, c.binDir, c.version, have)
		}
		return false, c.account.checkOwns(c.dir)
	case !errors.Is(err, fs.ErrNotExist):
		return false, fmt.Errorf("pgcluster: %w", err)
	}

	if err := c.account.chown(c.dir); err != nil {
		return false, err
	}
	if err := os.Chmod(c.dir, 0o700); err != nil {
		return false, fmt.Errorf("pgcluster: %w", err)
	}
	c.logger.InfoContext(ctx, "pgcluster: creating a new PostgreSQL cluster", slog.String("dir", c.dir))
	// Trust authentication: see the package documentation for why that is safe here.
	args := []string{"-D", c.dir, "--username=" + superuser, "--auth=trust", "--encoding=UTF8"}
	err = c.run(ctx, "initdb", append(args, "--locale=C.UTF-8")...)
	if err != nil && strings.Contains(err.Error(), "invalid locale name") {
		// C.UTF-8 is missing from some systems (macOS, older glibc); plain C always exists.
		err = c.run(ctx, "initdb", append(args, "--locale=C")...)
	}
	if err != nil {
		return false, err
	}
	return true, nil
}

// configure creates the socket and log directories and writes the settings ragd relies on to
// ragd.conf, included from postgresql.conf. It runs on every start so that the settings
// follow the directory if it moves.
func (c *Cluster) configure() error {
	for _, name := range []string{sockDirName, logDirName} {
		if err := c.mkdirOwned(filepath.Join(c.dir, name)); err != nil {
			return err
		}
	}

	conf := strings.Join([]string{
		"# Written by ragd (package pgcluster) on every start: edits are lost.",
		"# ALTER SYSTEM settings take precedence over these.",
		"listen_addresses = ''",
		"port = " + strconv.Itoa(port),
		"unix_socket_directories = " + quoteConf(filepath.Join(c.dir, sockDirName)),
		"unix_socket_permissions = 0700",
		"logging_collector = on",
		"log_directory = " + quoteConf(logDirName),
		"log_filename = 'postgresql-%a.log'", // a week of logs, one file per weekday
		"log_truncate_on_rotation = on",
		"log_rotation_age = 1d",
		"log_rotation_size = 0",
		"",
	}, "\n")
	confPath := filepath.Join(c.dir, confFileName)
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	if err := c.account.chown(confPath); err != nil {
		return err
	}

	mainPath := filepath.Join(c.dir, "postgresql.conf")
	mainConf, err := os.ReadFile(mainPath)
	if err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	include := "include = " + quoteConf(confFileName)
	for line := range strings.Lines(string(mainConf)) {
		if strings.TrimSpace(line) == include {
			return nil
		}
	}
	// Appending keeps the file's owner.
	f, err := os.OpenFile(mainPath, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	_, err = fmt.Fprintf(f, "\n# Added by ragd: the settings of its private cluster.\n%s\n", include)
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	return nil
}

// mkdirOwned creates a private directory for the server unless it exists.
func (c *Cluster) mkdirOwned(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil
		}
		return fmt.Errorf("pgcluster: %w", err)
	}
	return c.account.chown(dir)
}

// running reports whether a server is running on the cluster. pg_ctl checks that the process
// named in postmaster.pid is alive, so a file left behind by a crash reads as not running.
func (c *Cluster) running(ctx context.Context) (bool, error) {
	err := c.run(ctx, "pg_ctl", "status", "-D", c.dir)
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &exitErr) && exitErr.ExitCode() == 3: // "no server running"
		return false, nil
	default:
		return false, err
	}
}

// ensureRunning makes sure a server is running on the cluster and accepting connections,
// starting one unless there is one already. A server found running belongs to whoever started
// it; one that goes away while starting up or shutting down is replaced.
func (c *Cluster) ensureRunning(ctx context.Context, settings map[string]string) error {
	ctx, cancel := withDefaultTimeout(ctx)
	defer cancel()
	const retryInterval = 100 * time.Millisecond
	admin := connString(filepath.Join(c.dir, sockDirName), "postgres")
	notAnswering := func(err error) error {
		return fmt.Errorf("pgcluster: %s names a running process, but PostgreSQL does not accept "+
			"connections; if no server runs there, remove that file: %w",
			filepath.Join(c.dir, "postmaster.pid"), err)
	}
	var connErr error // the last failure to connect to a server said to be running
	for {
		running, err := c.running(ctx)
		if err != nil {
			if connErr != nil && ctx.Err() != nil {
				return notAnswering(connErr) // the deadline struck during pg_ctl status
			}
			return err
		}
		if !running {
			if err := c.start(ctx, settings); err != nil {
				return err
			}
			c.started = true
			return nil
		}

		var conn *pgx.Conn
		conn, connErr = pgx.Connect(ctx, admin)
		if connErr == nil {
			c.logger.InfoContext(ctx, "pgcluster: PostgreSQL is running already; using it", slog.String("dir", c.dir))
			return conn.Close(ctx)
		}
		var pgErr *pgconn.PgError
		if errors.As(connErr, &pgErr) && pgErr.Code != pgerrcode.CannotConnectNow {
			return fmt.Errorf("pgcluster: %w", connErr) // the server answered: retrying won't help
		}
		select {
		case <-ctx.Done():
			return notAnswering(connErr)
		case <-time.After(retryInterval):
		}
	}
}

// start starts the server with the given settings and waits until it accepts connections.
func (c *Cluster) start(ctx context.Context, settings map[string]string) error {
	// pg_ctl -l also keeps the server from inheriting the pipe that captures pg_ctl's output.
	// Once the logging collector runs, the server logs to log/postgresql-*.log instead.
	logFile := filepath.Join(c.dir, logDirName, "startup.log")
	args := []string{"start", "-D", c.dir, "-l", logFile, "-w", "-t", waitSeconds(ctx), "-s"}
	if len(settings) > 0 {
		var opts []string
		for _, name := range slices.Sorted(maps.Keys(settings)) {
			opts = append(opts, "-c "+name+"="+settings[name])
		}
		args = append(args, "-o", strings.Join(opts, " "))
	}
	for {
		err := c.run(ctx, "pg_ctl", args...)
		if err == nil {
			return nil
		}
		tail := lastLines(logFile, 10)
		// The children of a server killed with SIGKILL hold its shared memory until they notice,
		// a moment later; PostgreSQL refuses to start until they have gone.
		if strings.Contains(lastLines(logFile, 3), "pre-existing shared memory block") && ctx.Err() == nil {
			c.logger.InfoContext(ctx, "pgcluster: waiting for the processes of a crashed server to exit", slog.String("dir", c.dir))
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
			continue
		}
		if tail != "" {
			return fmt.Errorf("%w\n%s:\n%s", err, logFile, tail)
		}
		return err
	}
}

// bootstrap creates the "ragd" database and the vector extension in it, unless they exist.
func (c *Cluster) bootstrap(ctx context.Context) error {
	sockDir := filepath.Join(c.dir, sockDirName)
	conn, err := pgx.Connect(ctx, connString(sockDir, "postgres"))
	if err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))

	var exists bool
	err = conn.QueryRow(ctx, "SELECT EXISTS (SELECT FROM pg_database WHERE datname = $1)", database).Scan(&exists)
	if err != nil {
		return fmt.Errorf("pgcluster: looking for database %s: %w", database, err)
	}
	if !exists {
		_, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{database}.Sanitize())
		if err != nil && !isPgError(err, pgerrcode.DuplicateDatabase) {
			return fmt.Errorf("pgcluster: creating database %s: %w", database, err)
		}
	}

	db, err := pgx.Connect(ctx, connString(sockDir, database))
	if err != nil {
		return fmt.Errorf("pgcluster: %w", err)
	}
	defer db.Close(context.WithoutCancel(ctx))
	var available bool
	err = db.QueryRow(ctx, "SELECT EXISTS (SELECT FROM pg_available_extensions WHERE name = 'vector')").Scan(&available)
	if err != nil {
		return fmt.Errorf("pgcluster: looking for the vector extension: %w", err)
	}
	if !available {
		return fmt.Errorf("pgcluster: %w (PostgreSQL %s in %s)", ErrNoPgvector, c.version, c.binDir)
	}
	_, err = db.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS vector")
	if err != nil && !isPgError(err, pgerrcode.UniqueViolation) { // a concurrent CREATE won
		return fmt.Errorf("pgcluster: creating the vector extension: %w", err)
	}
	// The serving login. NOINHERIT: it holds no privilege of its own, only what SET ROLE
	// ragd_app (which ragd's pool does on connect) gives; ragd grants it ragd_app after
	// migrating. Roles belong to the cluster, so a concurrent start may have created it.
	_, err = conn.Exec(ctx, fmt.Sprintf(`DO $$ BEGIN
		IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = %[1]s) THEN
			CREATE ROLE %[2]s LOGIN NOINHERIT NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;
		END IF;
		EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
	END $$`, quoteLiteral(AppLogin), pgx.Identifier{AppLogin}.Sanitize()))
	if err != nil {
		return fmt.Errorf("pgcluster: creating the login %s: %w", AppLogin, err)
	}
	return nil
}

// quoteLiteral quotes s as an SQL string literal.
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// run runs one of the PostgreSQL programs as the server's account, in the cluster directory
// (which that account can enter, unlike perhaps ragd's working directory). The error carries
// what the program reported.
func (c *Cluster) run(ctx context.Context, program string, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(c.binDir, program), args...)
	cmd.Dir = c.dir
	cmd.Env = c.environ()
	cmd.SysProcAttr = c.account.sysProcAttr()
	cmd.WaitDelay = 5 * time.Second // in case a child holds an output pipe open
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		// The programs report problems on stderr; stdout has progress chatter.
		msg := bytes.TrimSpace(stderr.Bytes())
		if len(msg) == 0 {
			msg = bytes.TrimSpace(stdout.Bytes())
		}
		return fmt.Errorf("pgcluster: %s %s: %w: %s", program, strings.Join(args, " "), err, msg)
	}
	return nil
}

// environ is the environment for PostgreSQL's programs: ragd's, without the libpq and locale
// variables (PGPORT, PGDATA, LANG...) that would change what they do, and in the C locale so
// their messages are in English.
func (c *Cluster) environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "PG") || strings.HasPrefix(name, "LC_") ||
			name == "LANG" || name == "LANGUAGE" || (name == "HOME" && c.account.home != "") {
			continue
		}
		env = append(env, kv)
	}
	if c.account.home != "" {
		env = append(env, "HOME="+c.account.home)
	}
	return append(env, "LC_ALL=C")
}

// connString returns a pgx connection string for database db as the superuser over the
// socket in sockDir. The port, like sslmode, is spelled out so that the PGPORT and PGSSLMODE
// variables of ragd's environment cannot change it.
func connString(sockDir, db string) string { return connStringAs(sockDir, db, superuser) }

// connStringAs is connString for another role.
func connStringAs(sockDir, db, role string) string {
	u := url.URL{
		Scheme: "postgres",
		User:   url.User(role),
		Path:   "/" + db,
		// Like libpq, pgx decodes %XX in query values but takes "+" literally, so a space must
		// be %20, not the "+" of url.Values.Encode.
		RawQuery: "host=" + strings.ReplaceAll(url.QueryEscape(sockDir), "+", "%20") +
			"&port=" + strconv.Itoa(port) + "&sslmode=disable",
	}
	return u.String()
}

func socketPath(dir string) string {
	return filepath.Join(dir, sockDirName, ".s.PGSQL."+strconv.Itoa(port))
}

// quoteConf quotes s as a postgresql.conf string value.
func quoteConf(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(s) + "'"
}

func isPgError(err error, code string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == code
}

// withDefaultTimeout bounds ctx by defaultTimeout unless it has a deadline.
func withDefaultTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, defaultTimeout)
}

// waitSeconds is the value for pg_ctl's -t (seconds to wait) that matches ctx's deadline.
func waitSeconds(ctx context.Context) string {
	d := defaultTimeout
	if deadline, ok := ctx.Deadline(); ok {
		d = time.Until(deadline)
	}
	return strconv.Itoa(max(1, int(math.Ceil(d.Seconds()))))
}

// lastLines returns the last n lines of the file at path, or "" if it cannot be read.
func lastLines(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
