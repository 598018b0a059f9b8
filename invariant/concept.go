package invariant

import "github.com/ragd/ragd/classify"

// Safety concepts: general vocabulary of the domains a safety requirement protects, written from
// the definition of safety_requirement (labels README §2: safety, security or privacy) and from
// general knowledge of those domains, not from the labelled rows (session 7, sticky4; unchanged
// since, so that their cross-validated figures hold). The cue words of cues.go were written from
// the training rows, so a rule about a forklift, a dosage or a chargeback had no safety word the
// models could weigh; these lists give the models a concept to weigh instead of a word they never
// saw. They are features the models weigh; they gate no type. They only lower the type model's
// share from which a rule read as a hard constraint is a safety one (ConceptSafetyShare), chosen
// by grouped cross-validation (data/README.md).
//
// Each concept is one cue of the clause (c.<name>); one more asks whether the clause's sentence
// names any concept, and one whether a clause worded as a rule does. A text is looked up once,
// for all nine, in conceptIndex: as nine regular expressions they cost a detection 65% more.
var concepts = []struct {
	name string
	list string // a regular expression's alternatives, matched as whole words (see wordIndex)
}{
	// Harm to people, and the people a rule protects.
	{"people", `injur\w*|harm\w*|hurt\w*|wound\w*|accident\w*|casualt\w*|victims?|fatalit\w*|deaths?|lethal|life-threatening|bodily|` +
		`persons?|people|humans?|pedestrians?|cyclists?|bystanders?|passengers?|drivers?|workers?|employees?|staff|visitors?|guests?|` +
		`operators?|crew|residents?|occupants?|crowds?|spectators?|children|child|kids?|minors?|infants?|babies|baby|toddlers?|teens?|teenagers?|` +
		`underage|under-age|under 1[0-8]|pupils?|students?|elderly|seniors?|disabled|disabilit\w*|vulnerable|guardians?|parents?|parental|` +
		`caregivers?|carers?|nurses?|self-harm|suicid\w*|abus\w*|harass\w*|bully\w*|stalk\w*|threat\w*|violen\w*|weapons?|firearms?|guns?|knives|knife|` +
		`age verification|age-appropriate|adults? only|adult content|explicit content|grooming|trafficking|missing person`},
	// Health, medicine, allergies and food safety.
	{"health", `patients?|dos(?:e|es|age|ages|ing)|overdos\w*|medications?|medicines?|medical|drugs?|prescri\w*|pharmac\w*|clinic\w*|hospital\w*|` +
		`doctors?|physicians?|diagnos\w*|symptoms?|treatments?|therap\w*|allerg\w*|anaphyla\w*|epipen|gluten|coeliac|celiac|peanuts?|tree nuts?|nuts|` +
		`lactose|dairy|shellfish|sesame|intoleran\w*|diabet\w*|insulin|blood|pregnan\w*|breastfeed\w*|vaccin\w*|contraindicat\w*|side effects?|` +
		`health\w*|mental health|epilep\w*|seizures?|asthma\w*|heart condition|pacemakers?|wheelchairs?|hygien\w*|food safety|expired|expiry|` +
		`use-by|raw meat|undercooked|refrigerat\w*|contaminat\w*|infect\w*|steril\w*|first aid|ambulance|triage|icu|surgery|surgical|vital signs|` +
		`caffeine|alcohol|sober|nicotine|poison\w*|toxic\w*|toxin\w*`},
	// Physical hazards, and machines that move near people.
	{"hazard", `machine(?:ry|s)?|robots?|robotic\w*|robot arms?|forklifts?|cranes?|hoists?|drones?|vehicles?|cars?|trucks?|lorr(?:y|ies)|buses|trains?|` +
		`autonomous|self-driving|conveyors?|motors?|actuators?|blades?|saws?|lathes?|presses|lasers?|heaters?|ovens?|stoves?|boilers?|furnaces?|` +
		`batter(?:y|ies)|lithium|voltage|high-voltage|electric\w*|electrocut\w*|shocks?|wiring|mains|live wires?|circuits?|breakers?|fuses?|` +
		`fires?|flames?|flammable|combusti\w*|explos\w*|smoke|gas|gases|carbon monoxide|fumes?|ventilat\w*|chemicals?|acids?|bleach|solvents?|` +
		`radiation|radioactive|hazard\w*|danger\w*|unsafe|safety|safely|emergency|emergencies|e-stop|estop|emergency stop|interlocks?|` +
		`guards?|guardrails?|fenc(?:e|es|ed|ing)|barriers?|lockout|tagout|speed limits?|slow(?:s|ed)? down|brak(?:e|es|ing)|collisions?|collide|` +
		`falls?|falling|ladders?|scaffold\w*|harness\w*|helmets?|goggles|gloves|protective|ppe|load limits?|weight limits?|overload\w*|` +
		`overheat\w*|pressure|valves?|tanks?|pools?|drown\w*|lifeguards?|sharp|burns?|scald\w*|evacuat\w*|alarms?|sirens?|proximity|` +
		`clearance|perimeter|exclusion zone|safe distance|kill switch|cut-off|cutoff|shut-?off|shutdown|power off|de-energi[sz]\w*|` +
		`earthquakes?|floods?|storms?|avalanche|weather warning|ice|icy|slippery|trip hazard`},
	// Access control and permissions.
	{"access", `permissions?|permitted|access\w*|authori[sz]\w*|authenticat\w*|unauthenticated|logins?|log in|logged in|sign in|signed in|` +
		`roles?|rbac|abac|acls?|admins?|administrators?|privilege\w*|owners?|ownership|superusers?|sudo|root|read-only|readonly|write access|` +
		`scopes?|grant\w*|revok\w*|entitle\w*|allow-?list\w*|whitelist\w*|deny-?list\w*|block-?list\w*|blacklist\w*|approv\w*|sign-off|` +
		`two-factor|2fa|mfa|multi-factor|sso|saml|oauth|sessions?|lock(?:ed|s)?|unlock\w*|badges?|keycards?|restrict\w*|confidential|classified|` +
		`need-to-know|need to know|visible to|other users?|another user|other tenants?|another tenant|cross-tenant|tenant isolation|` +
		`impersonat\w*|audit\w*|sandbox\w*|isolat\w*|containers?|firewall\w*|vpn|network access|no network|rate-limit\w*|rate limit\w*|` +
		`brute[- ]forc\w*|least privilege|separation of duties|four-eyes|four eyes|maker-checker|segregat\w*`},
	// Credentials and secrets.
	{"secret", `passwords?|passphrases?|passcodes?|pins?|credentials?|secrets?|tokens?|api[- ]keys?|private keys?|ssh keys?|keys|` +
		`certificates?|certs?|keystores?|vault|kms|hsm|signing keys?|encryption keys?|salt\w*|hash\w*|bcrypt|argon2|plain ?text|cleartext|` +
		`env vars?|environment variables?|\.env|connection strings?|cookies?|otps?|one-time (?:code|password)s?|recovery codes?|` +
		`seed phrases?|mnemonic|wallet keys?`},
	// Malware, injection, attacks and scanning.
	{"attack", `malware|malicious|virus(?:es)?|antivirus|anti-virus|trojans?|ransomware|worms?|spyware|quarantin\w*|scan(?:s|ned|ning|ner|ners)?|` +
		`clamav|infected|attack\w*|exploit\w*|vulnerab\w*|cves?|patch(?:ed|es|ing)?|injection|inject\w*|sqli|xss|csrf|ssrf|rce|` +
		`remote code|arbitrary code|untrusted|user input|user-supplied|user-provided|sanitis\w*|sanitiz\w*|escap(?:e|ed|es|ing)|` +
		`input validation|validat\w*|payloads?|phishing|spam\w*|spoof\w*|suspicious|signed|signatures?|checksums?|integrity|tamper\w*|` +
		`supply chain|tls|ssl|https|encrypt\w*|decrypt\w*|ciphers?|executables?|macros?|attachments?|uploads?|uploaded|eval|exec|` +
		`shell commands?|prompt injection|jailbreak\w*|ddos|dos attack|botnet|intrusion|breach\w*|hack\w*|compromis\w*|verif\w*`},
	// Personal data, privacy and consent.
	{"personal", `personal data|personal information|personal details|personally identifiable|pii|phi|gdpr|ccpa|hipaa|lgpd|privacy|private|` +
		`consent\w*|opt-?in|opt-?out|opted (?:in|out)|unsubscrib\w*|anonymi[sz]\w*|pseudonymi[sz]\w*|de-?identif\w*|redact\w*|mask\w*|blur\w*|` +
		`faces?|photos?|photographs?|pictures?|videos?|biometric\w*|fingerprints?|face id|voice|recordings?|recorded|cameras?|cctv|` +
		`surveillance|tracking|tracked|trackers?|locations?|gps|geolocation|addresses|address|home address|phone numbers?|email address\w*|` +
		`emails?|date of birth|birthdays?|dob|ssn|social security|passports?|id cards?|national id|licen[cs]e plates?|names|full name|` +
		`surnames?|identit(?:y|ies)|identifiable|customer data|user data|customer records?|retention|retain\w*|delet(?:e|ed|es|ion)|erase\w*|` +
		`erasure|right to be forgotten|purg\w*|data subjects?|third[- ]part(?:y|ies)|share[sd]? with|sell\w* (?:the )?data|analytics|` +
		`telemetry|minimi[sz]\w*|diary|medical records?|health records?|salar(?:y|ies)|religio\w*|ethnic\w*|sexual orientation|` +
		`criminal records?|background checks?|whistleblow\w*|anonymous\w*|confidentiality|nda|disclos\w*|leak\w*|expos(?:e|ed|es|ure)|doxx?\w*`},
	// Fraud and the protection of money.
	{"money", `fraud\w*|scams?|scammers?|chargebacks?|refunds?|payments?|pay|paid|payouts?|payroll|transfers?|wire|wired|banks?|banking|` +
		`account numbers?|iban|swift|routing numbers?|cards?|credit cards?|debit cards?|cvv|cvc|pci|pci-dss|transactions?|money|funds?|` +
		`balances?|withdraw\w*|deposits?|daily limit|spending limit|transaction limit|double charg\w*|duplicate charg\w*|charg(?:e|ed|es|ing)|` +
		`overcharg\w*|launder\w*|aml|kyc|know your customer|sanctions?|stolen|theft|steal\w*|counterfeit|invoices?|billing|billed|` +
		`price manipulation|gambl\w*|betting|bets?|crypto\w*|bitcoin|wallets?|loans?|mortgages?|insurance|claims?|tax(?:es)?|dollars?|euros?`},
	// Where data may live.
	{"residency", `residency|sovereign\w*|regions?|eu|europe|european|in-country|on-?prem\w*|on premises?|local only|locally only|` +
		`stays? (?:in|on|inside|within)|leave[s]? (?:the|our)|cross-border|offshore|data ?cent(?:er|re)s?|hosted (?:in|on)|` +
		`germany|frankfurt|ireland|schrems|jurisdiction\w*|export control\w*|air-?gap\w*|offline|internal network|intranet|` +
		`outside (?:the|our)|abroad|overseas|foreign|us-only|uk-only|country|countries`},
}

// conceptIndex finds the nine concepts in a text in one pass over its words.
var conceptIndex = func() *wordIndex {
	lists := make([]string, len(concepts))
	for i, c := range concepts {
		lists[i] = c.list
	}
	return newWordIndex(lists)
}()

// conceptWords reports whether text f of v names any safety concept.
func conceptWords(v *view, f field) bool { return v.concepts(f) != 0 }

// conceptCues are the cues of the safety concepts, appended to cues.
func conceptCues() []cue {
	out := make([]cue, 0, len(concepts)+2)
	for i, c := range concepts {
		bit := uint64(1) << i
		out = append(out, cue{"c." + c.name, func(v *view) bool { return v.concepts(text)&bit != 0 }})
	}
	out = append(out,
		cue{"s.concept", func(v *view) bool { return conceptWords(v, sentence) }},
		cue{"concept+rule", func(v *view) bool { return conceptWords(v, text) && ruleWords(v) }})
	return out
}

// conceptCueNames are the names of the concepts' own cues, as clause inputs carry them.
var conceptCueNames = func() []string {
	out := make([]string, len(concepts))
	for i, c := range concepts {
		out[i] = "c." + c.name
	}
	return out
}()

// namesConcept reports whether a clause, as the models read it, names a safety concept.
func namesConcept(in classify.Input) bool {
	for _, name := range conceptCueNames {
		if in.Extra[name] != 0 {
			return true
		}
	}
	return false
}
