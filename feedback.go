package ragd

import (
	"time"

	"github.com/google/uuid"
)

// Ratings of a turn.
const (
	RatingUp   = "up"
	RatingDown = "down"
)

// SourceFlags a user may put on a source of a rated answer.
var SourceFlags = []string{"irrelevant", "wrong", "outdated", "unsupported", "helpful"}

// SourceFlag is a user's judgement of one source of an answer, by its letter ("A").
type SourceFlag struct {
	Source string `json:"source"`
	Flag   string `json:"flag"`
}

// NewFeedback is a user's rating of an assistant message.
type NewFeedback struct {
	MessageID uuid.UUID
	Rating    string // up or down
	Reason    string
	Sources   []SourceFlag
}

// Feedback is a recorded rating, with the mode and arm of the turn it rates. A message has one:
// rating it again replaces the rating (UpdatedAt moves), since a user may change their mind.
type Feedback struct {
	ID             uuid.UUID
	Tenant         uuid.UUID
	MessageID      uuid.UUID
	ConversationID uuid.UUID
	Turn           int
	Rating         string
	Reason         string
	Sources        []SourceFlag
	Mode           string
	Arm            string
	CreatedAt      time.Time
	UpdatedAt      time.Time
	// Previous is the rating this one replaced ("" for a message's first rating); SaveFeedback
	// sets it, so the monitors count a changed mind once.
	Previous string
}

// FeedbackFilter selects feedback for the audit export: by conversation and by the time it was
// last updated (From inclusive, To exclusive); AfterID and Limit page through it in id order
// (ids are UUIDv7: the order feedback was first given).
type FeedbackFilter struct {
	ConversationID uuid.UUID
	From, To       time.Time
	AfterID        uuid.UUID
	Limit          int
}

// ArmStratum is what the experiment report reads for one arm and one mode stratum: turns and
// conversations, context tokens and latency summed, and the turns' feedback.
type ArmStratum struct {
	Arm           string
	Mode          string
	Turns         int
	Conversations int
	ContextTokens int64
	LatencyMS     int64
	Rated         int
	Up            int
	Down          int
}

// ExperimentFilter bounds the turns an experiment report reads.
type ExperimentFilter struct {
	From, To time.Time
}
