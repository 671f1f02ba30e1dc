package slack

import "strings"

// entities are the three characters Slack escapes in a message's text.
var entities = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&")

// Unescape turns a message's text as Slack's Web API returns it into the
// text its author typed, what a pane and a ticket should read: Slack
// escapes "&", "<" and ">" (&amp; &lt; &gt;) and writes mentions, channels
// and links as <…> tokens. Every literal "<" of the author's is escaped, so
// a "<" in the text always opens a token:
//
//	<@U123>  <@U123|ann>           @U123  @ann
//	<#C123>  <#C123|general>       #C123  #general
//	<!here>  <!channel>  <!everyone>   @here  @channel  @everyone
//	<!subteam^S1|@team>            @team
//	<!date^1392734382^{date}|Feb 18>   Feb 18 (any <!…|label>: its label)
//	<https://x.y>                  https://x.y
//	<https://x.y|x.y>  <mailto:a@b.c|a@b.c>   x.y  a@b.c (the label is the address)
//	<https://x.y|the docs>         the docs (https://x.y)
//
// The entities are decoded once, after the tokens are split, so "&amp;lt;"
// reads "&lt;". A "<" with no ">" after it is kept as it is.
func Unescape(text string) string {
	if !strings.ContainsAny(text, "<&") {
		return text
	}
	var b strings.Builder
	for {
		open := strings.IndexByte(text, '<')
		if open < 0 {
			break
		}
		end := strings.IndexByte(text[open:], '>')
		if end < 0 {
			break
		}
		b.WriteString(entities.Replace(text[:open]))
		b.WriteString(readToken(text[open+1 : open+end]))
		text = text[open+end+1:]
	}
	b.WriteString(entities.Replace(text))
	return b.String()
}

// readToken is one <…> token's reading (its inside given).
func readToken(in string) string {
	target, label, labelled := strings.Cut(in, "|")
	target, label = entities.Replace(target), entities.Replace(label)
	switch {
	case strings.HasPrefix(target, "@"), strings.HasPrefix(target, "#"):
		if labelled && label != "" {
			return target[:1] + strings.TrimPrefix(label, target[:1])
		}
		return target
	case strings.HasPrefix(target, "!"):
		if labelled && label != "" {
			return label
		}
		if name, _, _ := strings.Cut(target[1:], "^"); name != "" {
			return "@" + name
		}
		return target
	}
	if !labelled || label == "" || label == target {
		return target
	}
	if _, bare, ok := strings.Cut(target, ":"); ok && strings.TrimPrefix(bare, "//") == label {
		return label // what the author typed, linked by Slack
	}
	return label + " (" + target + ")"
}
