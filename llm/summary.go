package llm

import (
	"context"
	"errors"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/ragd/ragd/compact"
	"github.com/ragd/ragd/token"
)

// summaryPrompt asks for a capsule: what a later turn of the conversation needs to know of a
// finished goal, with its values as they were written.
const summaryPrompt = "You summarize a finished part of a chat, one goal of the user, for later turns of the same chat. " +
	"Write two short lines and nothing else: first what the user wanted, then 'settled:' followed by every value " +
	"that was agreed or stated, as key=value pairs separated by semicolons (names, times, dates, days, counts, places, " +
	"choices, reference numbers) and what was achieved (for example status=booked). " +
	"Copy names, numbers and codes exactly as written. Do not add anything that was not said."

// SummaryMessages builds the prompt of a capsule: the instructions, then the goal's messages as
// "[turn N] role: text" lines.
func SummaryMessages(goal []compact.Message) []openai.ChatCompletionMessage {
	var b strings.Builder
	for _, m := range goal {
		fmt.Fprintf(&b, "[turn %d] %s: %s\n", m.Turn, m.Role, oneLine(m.Text))
	}
	return []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: summaryPrompt},
		{Role: openai.ChatMessageRoleUser, Content: b.String()},
	}
}

// Summarize writes the capsule of a finished goal (compact.Summarizer): the model's summary of
// its messages, in at most maxTokens tokens (longer ones are cut). A failing endpoint gives an
// error wrapping ragd.ErrUnavailable, an empty summary an error too: the caller falls back to the
// extractive capsule.
func (c *Client) Summarize(ctx context.Context, goal []compact.Message, maxTokens int) (string, error) {
	if len(goal) == 0 || maxTokens < 1 {
		return "", nil
	}
	req := c.request
	req.Stream = false
	req.Messages = SummaryMessages(goal)
	if req.MaxCompletionTokens > 0 {
		req.MaxCompletionTokens = maxTokens
	} else {
		req.MaxTokens = maxTokens
	}
	reqCtx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	resp, err := c.api.CreateChatCompletion(reqCtx, req)
	if err != nil {
		return "", c.failed(ctx, reqCtx, err)
	}
	if len(resp.Choices) == 0 {
		return "", errors.New("llm: the summary came back without a choice")
	}
	text := strings.TrimSpace(resp.Choices[0].Message.Content)
	if text == "" {
		return "", errors.New("llm: the summary came back empty")
	}
	return token.Fit(text, maxTokens), nil
}
