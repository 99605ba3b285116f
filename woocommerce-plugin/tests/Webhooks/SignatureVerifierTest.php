<?php
/**
 * @package ServicePay\WooCommerce
 */

namespace ServicePay\WooCommerce\Tests\Webhooks;

use PHPUnit\Framework\TestCase;
use ServicePay\WooCommerce\Webhooks\SignatureException;
use ServicePay\WooCommerce\Webhooks\SignatureVerifier;

/**
 * The vectors in tests/fixtures/signature-vectors.json are the SDK's too (test/woocommerce/signature-vectors.test.ts).
 */
final class SignatureVerifierTest extends TestCase {

	/** @return array<string,array{0:array<string,mixed>}> */
	public function vectors(): array {
		$file = json_decode( (string) file_get_contents( __DIR__ . '/../fixtures/signature-vectors.json' ), true );
		$out  = array();
		foreach ( $file['vectors'] as $vector ) {
			$out[ $vector['name'] ] = array( $vector );
		}
		return $out;
	}

	/**
	 * @dataProvider vectors
	 * @param array<string,mixed> $vector One vector.
	 */
	public function test_agrees_with_the_sdk_on_the_shared_vectors( array $vector ): void {
		try {
			$timestamp = SignatureVerifier::verify( $vector['body'], $vector['header'], $vector['secrets'], $vector['now'] );
			$outcome   = 'ok';
			$this->assertSame( 1700000000, $timestamp );
		} catch ( SignatureException $error ) {
			$outcome = $error->code_name;
		}
		$this->assertSame( $vector['expect'], $outcome );
	}

	public function test_sign_produces_what_verify_accepts_and_the_documented_format(): void {
		$header = SignatureVerifier::sign( 'body', 'whsec_x', 1700000000 );
		$this->assertSame( 't=1700000000,v1=' . hash_hmac( 'sha256', '1700000000.body', 'whsec_x' ), $header );
		$this->assertSame( 1700000000, SignatureVerifier::verify( 'body', $header, array( 'whsec_x' ), 1700000000 ) );
	}

	public function test_refuses_when_no_secret_is_stored(): void {
		$this->expectException( SignatureException::class );
		try {
			SignatureVerifier::verify( 'body', SignatureVerifier::sign( 'body', 'whsec_x', 1 ), array( '' ), 1 );
		} catch ( SignatureException $error ) {
			$this->assertSame( 'secret_missing', $error->code_name );
			throw $error;
		}
	}

	public function test_accepts_upper_case_hex_and_spaces_after_commas(): void {
		$signature = strtoupper( hash_hmac( 'sha256', '5.b', 's' ) );
		$this->assertSame( 5, SignatureVerifier::verify( 'b', 't=5, v1=' . $signature, array( 's' ), 5 ) );
	}
}
