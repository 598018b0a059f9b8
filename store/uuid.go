package store

import (
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
)

// uuidCodec is pgx's uuid codec taught github.com/google/uuid's UUID: the 16 bytes go to and
// come from PostgreSQL's binary format as they are. Without it pgx takes the type's
// driver.Valuer and sql.Scanner, formatting and parsing a 36-character string for every id of
// every statement (a turn sends and reads a few hundred).
type uuidCodec struct{ pgtype.UUIDCodec }

// registerUUID makes m encode and scan uuid.UUID, alone and in arrays, with uuidCodec.
func registerUUID(m *pgtype.Map) {
	t := &pgtype.Type{Name: "uuid", OID: pgtype.UUIDOID, Codec: uuidCodec{}}
	m.RegisterType(t)
	m.RegisterType(&pgtype.Type{Name: "_uuid", OID: pgtype.UUIDArrayOID, Codec: &pgtype.ArrayCodec{ElementType: t}})
}

func (c uuidCodec) PlanEncode(m *pgtype.Map, oid uint32, format int16, value any) pgtype.EncodePlan {
	if _, ok := value.(uuid.UUID); ok && format == pgtype.BinaryFormatCode {
		return encodeUUID{}
	}
	return c.UUIDCodec.PlanEncode(m, oid, format, value)
}

func (c uuidCodec) PlanScan(m *pgtype.Map, oid uint32, format int16, target any) pgtype.ScanPlan {
	if _, ok := target.(*uuid.UUID); ok && format == pgtype.BinaryFormatCode {
		return scanUUID{}
	}
	return c.UUIDCodec.PlanScan(m, oid, format, target)
}

type encodeUUID struct{}

func (encodeUUID) Encode(value any, buf []byte) ([]byte, error) {
	u := value.(uuid.UUID)
	return append(buf, u[:]...), nil
}

type scanUUID struct{}

// Scan leaves dst as it is for NULL, as uuid.UUID's own Scan does.
func (scanUUID) Scan(src []byte, dst any) error {
	if src == nil {
		return nil
	}
	u, err := uuid.FromBytes(src)
	if err != nil {
		return err
	}
	*dst.(*uuid.UUID) = u
	return nil
}
