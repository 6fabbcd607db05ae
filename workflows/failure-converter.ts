// The failure converter used when payloads are encrypted (process/payload-codec): a failure's
// message and stack trace move into its encodedAttributes payload, which the codec encrypts, since
// they can quote spec values. Loaded by path (DataConverter.failureConverterPath) by the worker and
// compiled into the workflow bundle (workflow code turns errors into failures in the sandbox), so
// it imports only @temporalio/common. Decoding needs no option: every DefaultFailureConverter reads
// encodedAttributes when a failure has them, and failures without them (older histories) as they are.
import { DefaultFailureConverter } from '@temporalio/common';

export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
