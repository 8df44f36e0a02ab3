/**
 * The words the default-deny rule reads (docs/explanation/privacy.md, "The rule"). These lists say what is
 * known to be safe or what marks a value's neighbourhood; none of them lists the forms of an
 * identity value, so a form nobody listed is still masked by the rule's shape tests.
 */

const set = (words: string): ReadonlySet<string> => new Set(words.split(/\s+/).filter((word) => word !== ''));

/**
 * Common words of English and Hinglish talk that are no part of a name, a handle or a spelled
 * value: next to digits, after "I am" or around "at", these stay readable. Anything not here is
 * taken for part of a value there (fail closed).
 */
export const SAFE_WORDS = set(`
  a an the and or but if so of to in on at by for from with without into onto over under up down out off about after before between
  i me my mine we us our you your he him his she her it its they them their this that these those there here what which who whom whose
  is am are was were be been being do does did done have has had having will would shall should can could may might must not no yes
  ok okay please thanks thank sorry hello hi hey bye sir madam ji haan nahi han na
  all any some each every other another more most less few many much one own same such only just also very too again still even
  now then when where why how while until since because though although than as like
  id ids code codes number numbers num otp pin password passcode value values field fields text type typed enter entered
  get got give gave given send sent sending receive received receiving said say says tell told ask asked call called calling
  go going gone come coming came see seen saw look looking know known think want need try trying tried help let make made
  new old good bad fine right wrong correct incorrect valid invalid error errors failed fail failure success successful done again
  first last next previous back home page screen step steps form forms button submit continue verify verified verification
  details detail info information document documents upload uploaded photo image file files card account bank branch
  mobile phone email mail address name names date birth dob year years month months day days time today tomorrow yesterday
  able unable working work works not_working issue problem problems question questions answer answers
  mera meri mere naam hai hain tha thi kya kaise kyun aap aapka aapki main mujhe hum ye yeh woh wo aur ka ki ke ko se me mein par
  speaking here there ready waiting wait hold minute minutes second seconds
  kyc pan aadhaar aadhar passport voter licence license gst upi ifsc vpa
  dns host server ip localhost proxy gateway port
`);

/** Words that end a told name: "mera naam Sunil Yadav hai", "this is Farhan speaking". */
export const NAME_STOP_WORDS = set(`
  and aur but hai hain he from here speaking calling please sir madam ji is was
  है हैं और जी बोल रहा रही हूँ हूं
  वैसा जैसा ही भी को का की के में पर से अपना अपनी सही लिखें लिखिए भरें दर्ज करें डालें
`);

/**
 * Phrases after which a person's name follows, in English, Hinglish and the Indian languages
 * docs/explanation/privacy.md lists. Lower case, NFKC; matched where a word starts.
 */
export const NAME_LABELS: readonly string[] = [
  'my full name is',
  'my name is',
  "my name's",
  'name is',
  'name',
  'full name',
  'i am',
  "i'm",
  'im',
  'this is',
  'call me',
  'it is',
  "it's",
  'c/o',
  's/o',
  'd/o',
  'w/o',
  'care of',
  'son of',
  'daughter of',
  'wife of',
  'applicant',
  'customer',
  'nominee',
  'holder',
  'surname',
  'last name',
  'father name',
  "father's name",
  'mother name',
  "mother's name",
  // Honorifics: a name follows (`Dr. Anand Krishnamurthy`, `Smt. Kamala Devi`).
  'mr',
  'mrs',
  'ms',
  'dr',
  'smt',
  'shri',
  'shrimati',
  'sri',
  'kumari',
  'श्री',
  'श्रीमती',
  'डॉ',
  'कुमारी',
  'mera naam',
  'mera nam',
  'naam hai',
  'naam',
  'mai',
  'मेरा नाम',
  'नाम',
  'मैं',
  'माझे नाव',
  'नाव',
  'আমার নাম',
  'নাম',
  'என் பெயர்',
  'பெயர்',
  'నా పేరు',
  'పేరు',
  'ನನ್ನ ಹೆಸರು',
  'ಹೆಸರು',
  'എന്റെ പേര്',
  'പേര്',
  'നാമം',
  'મારું નામ',
  'નામ',
  'ਮੇਰਾ ਨਾਮ',
  'ਨਾਮ',
  'ମୋ ନାମ',
  'ନାମ',
];

/**
 * Words after which a document's number, an account, a card or a handle is told: within a few
 * words after one, what reads as part of a value (capitals, digits, parts joined by `.` or `_`)
 * is masked even with no digit run (`PAN first part AQWPV`, `mail id anjali.deshmukh93`).
 */
export const VALUE_LABELS = set(`
  pan passport voter epic licence license dl gstin gst ifsc upi vpa handle email mail aadhaar aadhar uid account acct card
  पैन आधार पासपोर्ट खाता ईमेल यूपीआई
`);

/** The spelling alphabet: three of its words in a row spell a value (`alpha bravo charlie …`). */
export const SPELLING_WORDS = set(`
  alpha alfa bravo charlie delta echo foxtrot golf hotel india juliet juliett kilo lima mike november oscar papa quebec romeo
  sierra tango uniform victor whiskey whisky xray yankee zulu
`);

/** What ends "main … hoon" ("I am …" in Hindi), and what follows a name in "… bol raha hoon" ("… speaking"). */
export const HOON_WORDS = set('hoon hun hu hoo हूँ हूं हू');
export const SPEAKING_WORDS = set('bol बोल');
export const SPEAKING_AFTER = set('raha rahi rhi rha रहा रही');

/** Month names: English (and their short forms), and the Indian languages docs/explanation/privacy.md lists. */
export const MONTH_WORDS = set(`
  january february march april may june july august september october november december
  jan feb mar apr jun jul aug sep sept oct nov dec
  जनवरी फ़रवरी फरवरी मार्च अप्रैल मई जून जुलाई अगस्त सितंबर सितम्बर अक्टूबर अक्तूबर नवंबर नवम्बर दिसंबर दिसम्बर
  जानेवारी फेब्रुवारी एप्रिल मे जुलै ऑगस्ट सप्टेंबर ऑक्टोबर नोव्हेंबर डिसेंबर
  জানুয়ারি ফেব্রুয়ারি মার্চ এপ্রিল মে জুন জুলাই আগস্ট সেপ্টেম্বর অক্টোবর নভেম্বর ডিসেম্বর
  ஜனவரி பிப்ரவரி மார்ச் ஏப்ரல் மே ஜூன் ஜூலை ஆகஸ்ட் செப்டம்பர் அக்டோபர் நவம்பர் டிசம்பர்
  జనవరి ఫిబ్రవరి మార్చి ఏప్రిల్ మే జూన్ జూలై ఆగస్టు సెప్టెంబర్ అక్టోబర్ నవంబర్ డిసెంబర్
  ಜನವರಿ ಫೆಬ್ರವರಿ ಮಾರ್ಚ್ ಏಪ್ರಿಲ್ ಮೇ ಜೂನ್ ಜುಲೈ ಆಗಸ್ಟ್ ಸೆಪ್ಟೆಂಬರ್ ಅಕ್ಟೋಬರ್ ನವೆಂಬರ್ ಡಿಸೆಂಬರ್
  ജനുവരി ഫെബ്രുവരി മാർച്ച് ഏപ്രിൽ മേയ് ജൂൺ ജൂലൈ ഓഗസ്റ്റ് സെപ്റ്റംബർ ഒക്ടോബർ നവംബർ ഡിസംബർ
  જાન્યુઆરી ફેબ્રુઆરી માર્ચ એપ્રિલ મે જૂન જુલાઈ ઓગસ્ટ સપ્ટેમ્બર ઓક્ટોબર નવેમ્બર ડિસેમ્બર
  ਜਨਵਰੀ ਫ਼ਰਵਰੀ ਫਰਵਰੀ ਮਾਰਚ ਅਪ੍ਰੈਲ ਮਈ ਜੂਨ ਜੁਲਾਈ ਅਗਸਤ ਸਤੰਬਰ ਅਕਤੂਬਰ ਨਵੰਬਰ ਦਸੰਬਰ
  ଜାନୁଆରୀ ଫେବୃଆରୀ ମାର୍ଚ୍ଚ ଅପ୍ରେଲ ମଇ ଜୁନ ଜୁଲାଇ ଅଗଷ୍ଟ ସେପ୍ଟେମ୍ବର ଅକ୍ଟୋବର ନଭେମ୍ବର ଡିସେମ୍ବର
`);

/** Words that say a place: the words around them, and everything up to a PIN code after them, are an address. */
export const ADDRESS_WORDS = set(`
  road rd street st nagar colony sector flat house plot apartment apartments apt apts society lane marg chowk layout block phase
  floor tower towers village vill district dist taluk taluka tehsil mandal bagh gali galli mohalla vihar enclave extension
  pincode pin
  नगर मार्ग रोड गली मोहल्ला कॉलोनी सेक्टर फ्लैट मकान पिन गांव गाँव ज़िला जिला
`);

/** What a handle's "at" and "dot" are said as, besides `@` and `.`. */
export const SPOKEN_AT = set('at एट ऐट');
export const SPOKEN_JOINERS = set('dot underscore dash hyphen डॉट डोट');

/** Mail and UPI providers: after "at", these make a handle however common the word before. */
export const HANDLE_PROVIDERS = set(`
  gmail yahoo hotmail outlook rediffmail rediff live icloud protonmail zoho ymail aol
  ybl ibl axl apl paytm upi okicici okaxis oksbi okhdfcbank okhdfc icici hdfcbank sbi axisbank kotak fbl
`);

/** What "and" is between two parts of one number. */
export const AND_WORDS = set('and aur और');
