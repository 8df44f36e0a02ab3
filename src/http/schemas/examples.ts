/**
 * Request examples for the reference, as the deployed SDKs send them (shared field SDK
 * contract, sections 4 and 6-8). Hints are masked, as a well-behaved SDK sends them.
 */
const SESSION = '7664f88e-4980-41c3-bec0-f0e1591ee548';
const ENVELOPE = {
  user_id: 'user-42',
  session_id: SESSION,
  client_id: 'kycis_demo',
  mapping_version: 'v1',
  invoke_source: 'flow_test_harness',
  timestamp: 1_795_000_000,
};

export const EVENT_EXAMPLES = {
  screen_state: {
    summary: 'screen_state: AI.setKycStep on navigation',
    value: { ...ENVELOPE, event: 'screen_state', screen: 'pan_details', screen_id: 'pan_details', properties: {} },
  },
  component_input: {
    summary: 'component_input: a field filled, hint masked by the SDK',
    value: {
      ...ENVELOPE,
      event: 'component_input',
      screen: 'pan_details',
      screen_id: 'pan_details',
      component_id: 'pan_field',
      component_type: 'text_input',
      hint: '******234F',
      masked: true,
      properties: { field_status: 'FILLED', semantic_slot: 'pan' },
    },
  },
  validation_failed: {
    summary: 'validation_failed: a field rejected by the form',
    value: {
      ...ENVELOPE,
      event: 'validation_failed',
      screen: 'pan_details',
      screen_id: 'pan_details',
      errors: ['pan_invalid_format'],
      failure_reason_code: 'pan_invalid_format',
      component_id: 'pan_field',
      component_type: 'text_input',
      hint: '******234F',
      masked: true,
      expected_pattern: '[A-Z]{5}[0-9]{4}[A-Z]',
      validation_rule_id: 'pan_format_v1',
      properties: { error_code: 'pan_invalid_format', signal_strength: 'strong' },
    },
  },
};

export const TRIGGER_EXAMPLES = {
  after_error: {
    summary: 'after trackError, with the error code',
    value: {
      user_id: 'user-42',
      session_id: SESSION,
      signals: { screen: 'pan_details', time_spent: 95, errors: ['pan_invalid_format'], idle_seconds: 30 },
    },
  },
  passive: {
    summary: 'the passive loop (every 10 s), no errors',
    value: {
      user_id: 'user-42',
      session_id: SESSION,
      signals: { screen: 'pan_details', time_spent: 40, errors: [], idle_seconds: 12 },
    },
  },
};

export const START_EXAMPLES = {
  start: {
    summary: 'AI.startAssistant on the current step',
    value: { user_id: 'user-42', session_id: SESSION, screen: 'pan_details' },
  },
};

export const STOP_EXAMPLES = {
  stop: {
    summary: 'AI.stopAssistant (end call or LiveKit Disconnected)',
    value: { user_id: 'user-42', session_id: SESSION },
  },
};

/** The 12 workflow stages the harness registers under flow_key "kyc" (docs/decisions/0017-what-the-deployed-sdks-do.md). */
export const KYC_STAGES = [
  'phone_entry',
  'phone_otp',
  'email_entry',
  'email_otp',
  'pan_details',
  'personal_details',
  'verify_documents',
  'digilocker_aadhaar',
  'upload_aadhaar_front',
  'upload_aadhaar_back',
  'selfie_capture',
  'signature',
] as const;

export const FLOW_EXAMPLES = {
  harness: {
    summary: 'flows/set from the flow harness: the whole sequence and the current step',
    value: {
      user_id: 'user-42',
      session_id: SESSION,
      client_id: 'kycis_demo_harness',
      flow_key: 'kyc',
      step_sequence: [...KYC_STAGES],
      current_step: 'pan_details',
    },
  },
  live_app: {
    summary: 'AI.setFlow("onboarding") from the live app, once on SDK ready',
    value: { user_id: 'user-42', session_id: SESSION, client_id: 'kycis_demo', flow_key: 'onboarding' },
  },
};

/** AI.checkForDynamicPopup after a route change, as the deployed SDKs call it (docs/decisions/0017-what-the-deployed-sdks-do.md). */
export const POPUP_EXAMPLES = {
  after_navigation: {
    summary: 'popup check after a route change',
    value: {
      user_id: 'user-42',
      session_id: SESSION,
      signals: { screen: 'pan_details', time_spent: 14, idle_seconds: 9 },
    },
  },
};

/** The app went to the background with a dialable phone known, as the deployed SDKs register it (docs/decisions/0017-what-the-deployed-sdks-do.md). */
export const DROPOFF_REGISTER_EXAMPLES = {
  background: {
    summary: 'app backgrounded, dialable phone known',
    value: { user_id: 'user-42', session_id: SESSION, phone: '+919812345678', reason: 'app_background' },
  },
};

export const DROPOFF_CANCEL_EXAMPLES = {
  complete: { summary: 'AI.completeKycFlow', value: { user_id: 'user-42', session_id: SESSION } },
};
